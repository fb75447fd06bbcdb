package view

// aggFn is an aggregate function.
type aggFn uint8

const (
	aggCount aggFn = iota // COUNT(*): messages; COUNT(x): non-null values of x
	aggSum                // the sum of the numbers
	aggAvg                // their mean, a float
	aggMin                // the least value (see rank)
	aggMax                // the greatest value
	aggFirst              // FIRST_VALUE: the value in the group's first message, null included
	aggLast               // LAST_VALUE: the value in its last message
	aggMerge              // MERGE(*): every field seen, with its last value
)

var aggregates = map[string]aggFn{
	"count": aggCount, "sum": aggSum, "avg": aggAvg, "min": aggMin, "max": aggMax,
	"first_value": aggFirst, "last_value": aggLast, "merge": aggMerge,
}

// aggSpec is one aggregate of a view: its function and argument (the
// node opStar for *).
type aggSpec struct {
	fn  aggFn
	arg *node
}
