package api

import (
	"encoding/json"
	"net/http"
	"testing"

	"github.com/benchq/benchq/internal/apikey"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/store"
)

// TestAcknowledgeChangePoint: on a real store, the owner of a template's
// change point acknowledges it; another key gets the 404 of a point that
// does not exist; an admin may acknowledge anyone's; a
// malformed id is a 400 naming the field; the acknowledgement keeps who
// and when, and a second one changes nothing.
func TestAcknowledgeChangePoint(t *testing.T) {
	var st *store.Store
	env := newKeyEnvWith(t, nil, func(d *Deps) {
		st = d.Store.(*store.Store)
		d.ChangePoints = st
	})
	owner, ownerKey := env.addKey(t, "owner", false, apikey.Quota{})
	_, otherKey := env.addKey(t, "other", false, apikey.Quota{})
	_, adminKey := env.addKey(t, "admin", true, apikey.Quota{})
	point := func(series string) string {
		kept, _, err := st.RecordChangePoints(t.Context(), owner, "checkout", []job.ChangePoint{{Series: series, Template: "checkout", Target: "a",
			Metric: "p50_ms", JobID: "j9", Before: 20, After: 24, Magnitude: 0.2, PValue: 1e-5}}, true)
		if err != nil {
			t.Fatal(err)
		}
		return kept[0].ID
	}
	id, id2 := point("s1"), point("s2")
	ack := func(id, key string) (*http.Response, []byte) {
		return env.do(t, http.MethodPost, "/v1/trends/change-points/"+id+"/acknowledge", key, "")
	}

	for _, tt := range []struct {
		name, id, key string
		status        int
	}{
		{"another key", id, otherKey, http.StatusNotFound},
		{"unknown id", job.NewChangePointID(), ownerKey, http.StatusNotFound},
		{"malformed id", "cp_nope", ownerKey, http.StatusBadRequest},
		{"no key", id, "", http.StatusUnauthorized},
	} {
		resp, b := ack(tt.id, tt.key)
		if resp.StatusCode != tt.status {
			t.Errorf("%s: POST acknowledge = %d %s, want %d", tt.name, resp.StatusCode, b, tt.status)
			continue
		}
		// A 404 says no more than any 404 does (the problem table keeps
		// its detail back); a malformed id is named.
		if p := problem(t, resp, b); tt.status == http.StatusBadRequest && p.Field != "id" {
			t.Errorf("%s: problem %+v, want it to name the field id", tt.name, p)
		}
	}

	resp, b := ack(id, ownerKey)
	var cp job.ChangePoint
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &cp) != nil || cp.ID != id || !cp.Acknowledged || cp.AcknowledgedBy != owner || cp.AcknowledgedAt == nil {
		t.Fatalf("owner's acknowledge = %d %s, want 200 with the point acknowledged by %s", resp.StatusCode, b, owner)
	}
	resp, b = ack(id, adminKey)
	var again job.ChangePoint
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &again) != nil || again.AcknowledgedBy != owner || !again.AcknowledgedAt.Equal(*cp.AcknowledgedAt) {
		t.Errorf("second acknowledge = %d %s, want the first acknowledgement unchanged", resp.StatusCode, b)
	}
	resp, b = ack(id2, adminKey)
	if resp.StatusCode != http.StatusOK || json.Unmarshal(b, &again) != nil || !again.Acknowledged {
		t.Errorf("admin's acknowledge of the owner's point = %d %s, want 200", resp.StatusCode, b)
	}
}

// TestTrendChangePointQuery: the change point parameters are checked,
// each bad one named.
func TestTrendChangePointQuery(t *testing.T) {
	env := newKeyEnvWith(t, nil, nil) // no change point store
	for q, field := range map[string]string{
		"&change_points=maybe":                   "change_points",
		"&change_points=true&max_pvalue=0":       "max_pvalue",
		"&change_points=true&max_pvalue=abc":     "max_pvalue",
		"&change_points=true&min_magnitude=-0.1": "min_magnitude",
		"&max_pvalue=0.01":                       "max_pvalue",
		"&testbed=somewhere":                     "testbed",
	} {
		resp, b := env.do(t, http.MethodGet, "/v1/trends?template=checkout&metric=p99"+q, "", "")
		if resp.StatusCode != http.StatusBadRequest {
			t.Errorf("GET /v1/trends?...%s = %d %s, want 400", q, resp.StatusCode, b)
			continue
		}
		if p := problem(t, resp, b); p.Field != field {
			t.Errorf("GET /v1/trends?...%s: problem %+v, want field %s", q, p, field)
		}
	}
	resp, b := env.do(t, http.MethodGet, "/v1/trends?template=checkout&metric=p99&change_points=true", "", "")
	if resp.StatusCode != http.StatusServiceUnavailable {
		t.Errorf("change_points=true without a change point store = %d %s, want 503", resp.StatusCode, b)
	}
}
