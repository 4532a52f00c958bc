package upgrade

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"
)

// The client rate limiter refuses a wait the deadline would cut before the
// deadline passes, in words that do not wrap it: still the deadline, not a
// failed request. Without a deadline the same words are not one.
func TestDeadlineCutByTheRateLimiter(t *testing.T) {
	limiter := fmt.Errorf("client rate limiter Wait returned an error: %w", errors.New("rate: Wait(n=1) would exceed context deadline"))
	bounded, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if !DeadlineCut(bounded, limiter) {
		t.Error("the limiter's refusal under a deadline is not the deadline")
	}
	if DeadlineCut(context.Background(), limiter) || DeadlineCut(bounded, errors.New("connection refused")) || DeadlineCut(bounded, nil) {
		t.Error("a deadline where there is none")
	}
	passed, cancel2 := context.WithTimeout(context.Background(), -time.Second)
	defer cancel2()
	if !DeadlineCut(passed, errors.New("connection refused")) {
		t.Error("a passed deadline is not the deadline")
	}
	if DeadlineCut(passed, nil) {
		t.Error("a request that succeeded was cut")
	}
	if !DeadlineCut(context.Background(), fmt.Errorf("get: %w", context.DeadlineExceeded)) {
		t.Error("the deadline's own error is not the deadline")
	}
}

// Each bounded request says the API server did not answer in time when the
// rate limiter refused to wait past its bound, as when the bound passed.
func TestBoundedRequestsNameTheLimiterRefusal(t *testing.T) {
	limiter := errors.New("client rate limiter Wait returned an error: rate: Wait(n=1) would exceed context deadline")
	bounded, cancel := context.WithTimeout(context.Background(), time.Hour)
	defer cancel()
	if err := unanswered(bounded, time.Second, limiter); !strings.Contains(fmt.Sprint(err), "no answer from the API server within 1s") {
		t.Errorf("unanswered: %v", err)
	}
	l := &Locker{Cluster: "mgmt"}
	if err := l.mayHaveLanded(bounded, limiter); !strings.Contains(fmt.Sprint(err), "no answer from the API server within") {
		t.Errorf("mayHaveLanded: %v", err)
	}
	if err := unanswered(bounded, time.Second, errors.New("forbidden")); fmt.Sprint(err) != "forbidden" {
		t.Errorf("unanswered changed another error: %v", err)
	}
}
