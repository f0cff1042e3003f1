//go:build race

package solver

// raceBuild is true under -race, which makes the differential test about
// ten times slower: it then checks fewer positions.
const raceBuild = true
