//go:build race

package api_test

// raceBuild is true under -race, which makes the solver about ten times
// slower: the solver tests then take fewer deals.
const raceBuild = true
