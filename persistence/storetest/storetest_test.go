package storetest_test

import (
	"testing"

	"github.com/openpatience/solitaire/domain/domaintest"
	"github.com/openpatience/solitaire/persistence/storetest"
)

// The suite on the domain's in-memory store: it keeps the same guarantees
// as the databases (version conflicts, the hash chain, one daily game per
// player and day, listing order and cursors).
func TestMemStore(t *testing.T) {
	t.Parallel()
	storetest.Run(t, func(t *testing.T) storetest.Store { return domaintest.NewMemStore() })
}
