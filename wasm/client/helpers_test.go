package client

import "fmt"

// sprint formats a value for comparisons.
func sprint(v any) string { return fmt.Sprint(v) }
