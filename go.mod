module github.com/superagents/superagents

go 1.26.0
