package docs

import (
	"encoding/json"
	"testing"

	"github.com/openpatience/solitaire/docs/npmtest"
)

// TestSpecLints runs Redocly CLI (pinned in docs/lint/package-lock.json)
// on openapi.yaml with the recommended ruleset and the rules of
// docs/lint/redocly.yaml, and fails on any error or warning. The only
// findings it may skip are the exact ones docs/lint/.redocly.lint-ignore.yaml
// lists, with the reason.
func TestSpecLints(t *testing.T) {
	t.Parallel()
	npmtest.Install(t, "lint")
	// redocly exits 1 on errors; the totals say everything either way.
	out := npmtest.RunAny(t, "lint", "node_modules/.bin/redocly", "lint", "../../openapi.yaml",
		"--config", "redocly.yaml", "--format", "json")
	var res struct {
		Totals struct {
			Errors   int `json:"errors"`
			Warnings int `json:"warnings"`
		} `json:"totals"`
		Problems []struct {
			RuleID   string `json:"ruleId"`
			Severity string `json:"severity"`
			Message  string `json:"message"`
			Location []struct {
				Pointer string `json:"pointer"`
			} `json:"location"`
		} `json:"problems"`
	}
	if err := json.Unmarshal(out, &res); err != nil {
		t.Fatalf("redocly's report: %v\n%s", err, out)
	}
	for _, p := range res.Problems {
		where := ""
		if len(p.Location) > 0 {
			where = p.Location[0].Pointer
		}
		t.Errorf("%s %s at %s: %s", p.Severity, p.RuleID, where, p.Message)
	}
	if res.Totals.Errors+res.Totals.Warnings != 0 || len(res.Problems) != 0 {
		t.Errorf("redocly lint: %d errors, %d warnings", res.Totals.Errors, res.Totals.Warnings)
	}
}
