package notifications

import "time"

// SyncStatusRefreshed tells whether app's status has been compared since
// its last operation finished, as Argo CD's notifications controller
// asks before it looks at an Application: right after a sync its sync
// and health status still describe the state before it, and a trigger
// would fire on that (a sync "succeeded" but the app still OutOfSync).
// An Application without status waits for its first comparison.
func SyncStatusRefreshed(app map[string]any) bool {
	status, ok := app["status"].(map[string]any)
	if !ok {
		return false
	}
	op, ok := status["operationState"].(map[string]any)
	if !ok {
		return true
	}
	switch op["phase"] {
	case "Failed", "Error", "Succeeded":
	default:
		return true
	}
	finished, ok := parseTime(op["finishedAt"])
	if !ok {
		return false
	}
	reconciled, _ := parseTime(status["reconciledAt"])
	observed, _ := parseTime(status["observedAt"])
	return !(finished.After(reconciled) && finished.After(observed))
}

func parseTime(v any) (time.Time, bool) {
	s, _ := v.(string)
	t, err := time.Parse(time.RFC3339, s)
	return t, err == nil
}
