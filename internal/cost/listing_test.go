package cost_test

import (
	"context"
	"testing"

	"github.com/google/go-cmp/cmp"
	"pgregory.net/rapid"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/agenttest"
	"github.com/superagents/superagents/internal/cost"
)

// checkListing: a listing of every session of the tree, read in bulk,
// gives each the Costs that its own tree gives it.
func checkListing(rt *rapid.T, st sa.Store, root *node) {
	if _, ok := st.(cost.BulkReader); !ok {
		rt.Fatal("the SQLite store reads listings in bulk")
	}
	var ids []string
	var walk func(n *node)
	walk = func(n *node) {
		ids = append(ids, n.id)
		for _, c := range n.children {
			walk(c)
		}
	}
	walk(root)
	ctx := context.Background()
	listed, err := cost.Each(ctx, st, prices, ids, func(id string) string { return id }, func(_ string, c cost.Costs) cost.Costs { return c })
	if err != nil {
		rt.Fatal(err)
	}
	for i, id := range ids {
		want, err := cost.Listed(ctx, st, prices, id)
		if err != nil {
			rt.Fatal(err)
		}
		if d := cmp.Diff(want, listed[i]); d != "" {
			rt.Fatalf("listed costs of %s differ from its tree's (-tree +listing):\n%s", id, d)
		}
	}
}

// hideBulk is a store without the bulk reads.
type hideBulk struct{ sa.Store }

func TestEachWithoutBulkReads(t *testing.T) {
	ctx := context.Background()
	st := agenttest.Store(t, t.TempDir())
	sess, err := st.CreateSession(ctx, sa.NewSession{Agent: "general", Messages: []sa.Message{
		{Role: sa.RoleAssistant, Model: "anthropic/claude-sonnet-4-5", Usage: sa.Usage{InputTokens: 1e6}, Parts: []sa.Part{sa.TextPart("ok")}}}})
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []sa.Store{st, hideBulk{st}} {
		got, err := cost.Each(ctx, s, prices, []string{sess.ID}, func(id string) string { return id }, func(_ string, c cost.Costs) cost.Costs { return c })
		if err != nil || len(got) != 1 || got[0].Cost.USD != 3 || got[0].TreeCost.USD != 3 {
			t.Fatalf("%T: %+v, %v; want $3 own and tree", s, got, err)
		}
	}
	empty, err := cost.Each(ctx, st, prices, []string{}, func(id string) string { return id }, func(_ string, c cost.Costs) cost.Costs { return c })
	if err != nil || empty == nil || len(empty) != 0 {
		t.Fatalf("empty listing = %#v, %v; want an empty, non-nil slice", empty, err)
	}
}
