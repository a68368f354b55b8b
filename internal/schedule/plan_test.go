package schedule_test

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/benchq/benchq/internal/errcode"
	"github.com/benchq/benchq/internal/job"
	"github.com/benchq/benchq/internal/schedule"
	"github.com/benchq/benchq/internal/template"
)

func TestParseNamesTheBadField(t *testing.T) {
	tests := []struct {
		name  string
		s     template.Schedule
		field string // "" : valid
	}{
		{"every minute", template.Schedule{Cron: "* * * * *"}, ""},
		{"descriptor in a zone", template.Schedule{Cron: "@daily", Timezone: "Europe/Berlin", Missed: "run_once"}, ""},
		{"jitter up to the interval", template.Schedule{Cron: "*/15 * * * *", Jitter: job.Duration(15 * time.Minute)}, ""},
		{"empty cron", template.Schedule{}, "schedule.cron"},
		{"six fields", template.Schedule{Cron: "0 * * * * *"}, "schedule.cron"},
		{"bad minute", template.Schedule{Cron: "61 * * * *"}, "schedule.cron"},
		{"every", template.Schedule{Cron: "@every 1m"}, "schedule.cron"},
		{"unknown zone", template.Schedule{Cron: "* * * * *", Timezone: "Mars/Olympus"}, "schedule.timezone"},
		{"Local is not a zone", template.Schedule{Cron: "* * * * *", Timezone: "Local"}, "schedule.timezone"},
		{"jitter past the interval", template.Schedule{Cron: "*/15 * * * *", Jitter: job.Duration(16 * time.Minute)}, "schedule.jitter"},
		{"negative jitter", template.Schedule{Cron: "* * * * *", Jitter: job.Duration(-time.Second)}, "schedule.jitter"},
		{"unknown policy", template.Schedule{Cron: "* * * * *", Missed: "all"}, "schedule.missed"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := schedule.Parse(tt.s)
			if tt.field == "" {
				if err != nil {
					t.Fatalf("Parse = %v, want nil", err)
				}
				return
			}
			var ve *errcode.Error
			if !errors.As(err, &ve) || ve.Problems[0].Field != tt.field {
				t.Fatalf("Parse = %v, want a problem at %s", err, tt.field)
			}
		})
	}
}

// TestValidateRefusesWhatParseReads: a new schedule may not carry its own
// time zone in the cron, nor be one that never fires; a stored one still
// parses.
func TestValidateRefusesWhatParseReads(t *testing.T) {
	tests := []struct {
		name string
		s    template.Schedule
		msg  string // part of the problem at schedule.cron; "" : valid
	}{
		{"daily in a zone", template.Schedule{Cron: "0 3 * * *", Timezone: "Europe/Berlin"}, ""},
		{"yearly", template.Schedule{Cron: "0 0 31 12 *"}, ""},
		{"CRON_TZ prefix", template.Schedule{Cron: "CRON_TZ=Asia/Tokyo 0 3 * * *"}, "time zone prefix"},
		{"TZ prefix", template.Schedule{Cron: "TZ=Asia/Tokyo 0 3 * * *", Timezone: "Europe/Berlin"}, "time zone prefix"},
		{"30th of February", template.Schedule{Cron: "0 0 30 2 *"}, "never fires within a year"},
		{"31st of April", template.Schedule{Cron: "0 0 31 4 *"}, "never fires within a year"},
		{"29th of February", template.Schedule{Cron: "0 0 29 2 *"}, "never fires within a year"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := schedule.Validate(&tt.s)
			if tt.msg == "" {
				if err != nil {
					t.Fatalf("Validate(%q) = %v, want nil", tt.s.Cron, err)
				}
				return
			}
			var ve *errcode.Error
			if !errors.As(err, &ve) || len(ve.Problems) != 1 || ve.Problems[0].Field != "schedule.cron" || !strings.Contains(ve.Problems[0].Message, tt.msg) {
				t.Fatalf("Validate(%q) = %v, want one problem at schedule.cron saying %q", tt.s.Cron, err, tt.msg)
			}
			if _, err := schedule.Parse(tt.s); err != nil {
				t.Errorf("Parse(%q) = %v, want a stored schedule to stay readable", tt.s.Cron, err)
			}
		})
	}
}

func TestNextRunInZoneWithJitter(t *testing.T) {
	berlin, err := time.LoadLocation("Europe/Berlin")
	if err != nil {
		t.Skip("no tzdata:", err)
	}
	p, err := schedule.Parse(template.Schedule{Cron: "0 2 * * *", Timezone: "Europe/Berlin"})
	if err != nil {
		t.Fatal(err)
	}
	now := time.Date(2026, 7, 1, 12, 0, 0, 0, time.UTC)
	if got, want := p.NextRun("k/t", now), time.Date(2026, 7, 2, 2, 0, 0, 0, berlin); !got.Equal(want) {
		t.Errorf("NextRun = %s, want %s (02:00 Berlin, summer time)", got, want)
	}
	j, err := schedule.Parse(template.Schedule{Cron: "0 * * * *", Jitter: job.Duration(10 * time.Minute)})
	if err != nil {
		t.Fatal(err)
	}
	tick := time.Date(2026, 7, 1, 13, 0, 0, 0, time.UTC)
	now = now.Add(30 * time.Minute) // past 12:00's jitter
	seen := map[time.Duration]bool{}
	for _, ref := range []string{"a/x", "b/x", "c/x", "d/x"} {
		d := j.FireAt(ref, tick).Sub(tick)
		again, _ := schedule.Parse(template.Schedule{Cron: "0 * * * *", Jitter: job.Duration(10 * time.Minute)})
		if d < 0 || d > 10*time.Minute || !again.FireAt(ref, tick).Equal(tick.Add(d)) {
			t.Fatalf("jitter of %s = %s, want 0..10m and the same from another scheduler's plan", ref, d)
		}
		if got := j.NextRun(ref, now); !got.Equal(tick.Add(d)) {
			t.Errorf("NextRun(%s) = %s, want the jittered tick %s", ref, got, tick.Add(d))
		}
		seen[d] = true
	}
	if len(seen) < 2 {
		t.Errorf("four schedules got the same jitter %v: it does not spread them", seen)
	}
}
