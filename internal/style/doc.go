// Package style holds, as tests, the project's rules on the size of code
// and on which packages may import which, so that a change that breaks one
// fails CI. It has no code of its own.
package style
