package serverdate

import (
	"context"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/upgrade-console/upgrade-console/model"
)

func TestServerDateIsTheResponsesDateAgedByThisMachinesClock(t *testing.T) {
	date := time.Date(2026, 11, 25, 12, 0, 0, 0, time.UTC)
	var header string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		// net/http adds its own Date unless one is set, or set to nil.
		if header == "" {
			w.Header()["Date"] = nil
		} else {
			w.Header().Set("Date", header)
		}
	}))
	defer srv.Close()
	client := &http.Client{Transport: Wrap(time.Now)(http.DefaultTransport)}
	get := func() (time.Time, time.Time) {
		t.Helper()
		d := &Recorder{}
		ctx := With(context.Background(), d)
		req, _ := http.NewRequestWithContext(ctx, http.MethodGet, srv.URL, nil)
		resp, err := client.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return d.Get()
	}

	header = date.Format(http.TimeFormat)
	before := time.Now()
	got, received := get()
	if !got.Equal(date) || received.Before(before) || received.After(time.Now()) {
		t.Fatalf("Date %s received %s, want %s received during the request", got, received, date)
	}
	// The server's clock at a later moment is the Date plus the time
	// since it came: ten minutes behind or ahead of this machine, as the
	// server says, not as this machine does.
	if sn := model.ServerTimeAt(got, received, received.Add(90*time.Second)); !sn.Equal(date.Add(90 * time.Second)) {
		t.Errorf("server now 90s after the response: %s, want %s", sn, date.Add(90*time.Second))
	}
	// A "now" before the response (a fixed clock) ages it by nothing.
	if sn := model.ServerTimeAt(got, received, received.Add(-time.Hour)); !sn.Equal(date) {
		t.Errorf("server now before the response: %s, want the Date %s", sn, date)
	}

	for _, h := range []string{"", "yesterday"} {
		header = h
		if got, _ := get(); !got.IsZero() {
			t.Errorf("Date %q read as %s, want unknown", h, got)
		}
		if sn := model.ServerTimeAt(time.Time{}, time.Time{}, time.Now()); !sn.IsZero() {
			t.Errorf("server now without a Date: %s, want unknown", sn)
		}
	}
	// A request that did not ask records nothing, and fails nothing.
	resp, err := client.Get(srv.URL)
	if err != nil {
		t.Fatal(err)
	}
	resp.Body.Close()
}
