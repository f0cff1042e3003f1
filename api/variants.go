package api

import (
	"net/http"

	"github.com/gin-gonic/gin"

	"github.com/openpatience/solitaire/domain"
)

// Variant is one row of the rules table (RULES R3): the fixed shape of the
// game, the rules a game gets by default, and the values each option may
// take at creation. Any option changed from its default except draw makes
// the game unranked.
type Variant struct {
	ID          string        `json:"id" example:"klondike"`
	Name        string        `json:"name" example:"Klondike (draw 1)"`
	Source      string        `json:"source" example:"seed 001"`
	Decks       int           `json:"decks" minimum:"1" maximum:"3"`
	Piles       int           `json:"piles" minimum:"1"`
	Foundations int           `json:"foundations" minimum:"4"`
	Sequences   bool          `json:"sequences"`
	Defaults    GameOptions   `json:"defaults"`
	Choices     OptionChoices `json:"choices"`
	// NumberedDeals lists the deal schemes POST /v1/games takes in "deal"
	// for this variant (R6.7): ["pysolfc"] for one-deck Klondike games,
	// empty otherwise.
	NumberedDeals []string `json:"numbered_deals" enums:"pysolfc"`
} // @name Variant

// OptionChoices lists, per option of CreateOptions, the values the variant
// accepts. time_limit_s is 0 (no limit) or a number of seconds in
// min..max.
type OptionChoices struct {
	Draw         []int     `json:"draw"`
	Scoring      []string  `json:"scoring"`
	TakeBack     []bool    `json:"take_back"`
	Flip         []string  `json:"flip"`
	Autocomplete []string  `json:"autocomplete"`
	TimeLimitS   TimeRange `json:"time_limit_s"`
	Undo         []bool    `json:"undo"`
} // @name OptionChoices

// TimeRange is the range of a time limit in seconds.
type TimeRange struct {
	Min int `json:"min"`
	Max int `json:"max"`
} // @name TimeRange

// VariantList is the rules table, in table order.
type VariantList struct {
	Variants []Variant `json:"variants"`
} // @name VariantList

// accepted keeps the candidates the variant's Resolve accepts for the
// option set by with: the domain stays the one authority on options.
func accepted[T any](v domain.Variant, candidates []T, with func(*domain.Options, *T)) []T {
	out := []T{}
	for i := range candidates {
		var o domain.Options
		with(&o, &candidates[i])
		if _, _, err := v.Resolve(o); err == nil {
			out = append(out, candidates[i])
		}
	}
	return out
}

func newVariant(v domain.Variant) Variant {
	d := v.Defaults
	strs := func(xs ...string) []string { return xs }
	return Variant{ID: v.ID, Name: v.Name, Source: v.Source, Decks: d.Decks, Piles: d.Piles,
		Foundations: d.Foundations, Sequences: d.Sequences, Defaults: newGameOptions(d),
		NumberedDeals: domain.NumberedDeals(d),
		Choices: OptionChoices{
			Draw: accepted(v, []int{1, 3}, func(o *domain.Options, x *int) { o.Draw = x }),
			Scoring: accepted(v, strs("none", "klassik", "standard", "vegas"), func(o *domain.Options, x *string) {
				sc := domain.Scoring(*x)
				o.Scoring = &sc
			}),
			TakeBack: accepted(v, []bool{false, true}, func(o *domain.Options, x *bool) { o.TakeBack = x }),
			Flip: accepted(v, strs("auto", "player"), func(o *domain.Options, x *string) {
				f := domain.FlipMode(*x)
				o.Flip = &f
			}),
			Autocomplete: accepted(v, strs("offered", "automatic"), func(o *domain.Options, x *string) {
				a := domain.AutocompleteMode(*x)
				o.Autocomplete = &a
			}),
			TimeLimitS: TimeRange{Min: domain.MinTimeLimitS, Max: domain.MaxTimeLimitS},
			Undo:       accepted(v, []bool{false, true}, func(o *domain.Options, x *bool) { o.Undo = x }),
		}}
}

// listVariants is the rules table as data.
//
//	@Summary		List the variants
//	@Description	The rules table (RULES R3) as data, with each variant's defaults and option choices. Needs no auth.
//	@Tags			variants
//	@Produce		json
//	@Success		200	{object}	VariantList
//	@Failure		500	{object}	Problem
//	@ID		listVariants
//	@Router			/v1/variants [get]
func (s *server) listVariants(c *gin.Context) reply {
	vs := domain.Variants()
	out := VariantList{Variants: make([]Variant, len(vs))}
	for i, v := range vs {
		out.Variants[i] = newVariant(v)
	}
	return s.jsonReply(http.StatusOK, out)
}
