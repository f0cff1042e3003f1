package app

import (
	"context"

	"github.com/openpatience/solitaire/domain"
)

// Dealer hands out proven deals (R7.2). Package domain/supply implements it (a
// supply that proves deals in the background, supply.Supply); the services
// only take from it, so no request waits for a proof longer than the
// dealer's own short bound.
type Dealer interface {
	// ProvenDeal takes one proven deal of rules (a variant's rules with
	// its options resolved, domain.Variant.Resolve), never the same one twice.
	// It waits at most the dealer's bound (a couple of seconds) and less
	// if ctx ends first. Errors: *domain.DealNotReadyError when none is ready
	// in time (the caller answers 503 with Retry-After), or ctx's error.
	ProvenDeal(ctx context.Context, rules domain.Rules) (domain.ProvenDeal, error)
}
