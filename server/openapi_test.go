package server_test

import (
	"encoding/json"
	"regexp"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/custodian-dev/custodian/server"
	"github.com/custodian-dev/custodian/wire"
)

// The checked-in OpenAPI document describes exactly the routes the server
// registers, and every ASDD operation.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	if err := json.Unmarshal(server.OpenAPI(), &doc); err != nil {
		t.Fatalf("openapi.json: %v", err)
	}
	if !strings.HasPrefix(doc.OpenAPI, "3.") {
		t.Fatalf("openapi version %q", doc.OpenAPI)
	}
	var documented []string
	for p, ops := range doc.Paths {
		for m := range ops {
			documented = append(documented, strings.ToUpper(m)+" "+p)
		}
	}
	wild := regexp.MustCompile(`\{(\w+)\.\.\.\}`)
	var served []string
	for _, r := range server.Routes() {
		served = append(served, wild.ReplaceAllString(r, "{$1}"))
	}
	sort.Strings(documented)
	sort.Strings(served)
	if !slices.Equal(documented, served) {
		t.Fatalf("openapi.json documents\n  %v\nthe server serves\n  %v", documented, served)
	}
	var raw map[string]any
	if err := json.Unmarshal(doc.Paths["/v1/asdd/{op}"]["post"], &raw); err != nil {
		t.Fatal(err)
	}
	params := raw["parameters"].([]any)
	enum := params[0].(map[string]any)["schema"].(map[string]any)["enum"].([]any)
	var names []string
	for _, e := range enum {
		names = append(names, e.(string))
	}
	if !slices.Equal(names, server.ASDDOps()) {
		t.Fatalf("openapi.json lists operations %v, the server runs %v", names, server.ASDDOps())
	}
	// POST /v1/cycle names its operations in its description.
	var cyc struct {
		Description string `json:"description"`
	}
	if err := json.Unmarshal(doc.Paths["/v1/cycle"]["post"], &cyc); err != nil {
		t.Fatal(err)
	}
	for _, op := range wire.CycleOps() {
		if !regexp.MustCompile(`[(, ]` + regexp.QuoteMeta(op) + `[ ,)]`).MatchString(cyc.Description) {
			t.Errorf("openapi.json's /v1/cycle does not name operation %q: %s", op, cyc.Description)
		}
	}
}
