// Package view compiles and evaluates the stream SQL views of
// rtm/subscribe's filter and period: SELECT statements over the messages
// of one channel, as Satori's service ran them.
//
//	SELECT select_list FROM channel [WHERE expr] [GROUP BY expr, ...]
//
// The select list is * or expr [AS name], ...; the channel is a bare
// name (a.b for "a.b") or `backticked`; fields are paths a.b.c whose
// segments may be backticked. Literals are numbers, 'single' or "double"
// quoted strings (the quote doubled stands for itself; no backslash
// escapes), true, false and null. Operators: = == != <> < <= > >=, AND,
// OR, NOT, LIKE (% and _, case-sensitive, no escape), IN (...), IS [NOT]
// NULL, BETWEEN, + - * / % and parentheses; functions lower, upper,
// length, substr, abs, round, floor, ceil, coalesce; aggregates COUNT(*),
// COUNT(x), SUM, AVG, MIN, MAX, FIRST_VALUE, LAST_VALUE and MERGE(*).
// Keywords and function names are case-insensitive; keywords are
// reserved (a field named from is written `from`).
//
// # Using it from the edge
//
// Compile a statement once per distinct text (a *View is immutable and
// safe for concurrent use) and evaluate it once per message for all the
// subscribers of that text. A compile error is an *Error with the Column
// and Reason of the fault, for the invalid_filter reply. Channel gives
// the FROM channel; Aggregates tells the two kinds of view apart:
//
//   - a simple view: View.Append(dst, msg) appends the projected message
//     (msgpack, the edge's carrier) or reports that the view drops msg.
//     For SELECT * (SelectsAll) Match is enough and the edge can send the
//     encodings it already holds.
//   - an aggregate view: one *Aggregate per view (and period, which
//     Period reads); Add each message, and at the end of each period
//     Flush returns one message per group and empties it for the next.
//     The package starts no goroutine and no timer: the edge owns the
//     period's clock and calls Flush.
//
// View's methods take an Evaluator from a pool; a caller that evaluates
// from one goroutine may keep its own (NewEvaluator) and save the pool.
//
// # Evaluating on msgpack
//
// Messages are never decoded into Go values. Compile gathers the fields
// a view reads into a tree of path segments and numbers them; loading a
// message walks its top-level map once, notes the byte range of each
// wanted field and steps over everything else. Every item's structure is
// checked (lengths against the data, nesting, no extension), so no input
// can make the evaluator read out of bounds or panic, and a message that
// is not one valid map is dropped. UTF-8 is checked, by wire.Scanner,
// only where a string can reach a result: the fields of the select list
// (all fields, in an aggregate view; the whole message with MERGE(*)).
// A field only WHERE tests, and the rest of a SELECT * message, is left
// as the edge's codecs checked it on publish: checking every string of
// every message would cost as much as the rest of the walk. Expressions
// then decode only the items they ask for into a small value that
// aliases the message, and a projected field is copied as its original
// bytes. Strings made by lower and upper go to a scratch buffer the
// Evaluator reuses, so evaluation allocates nothing; View takes
// Evaluators from a sync.Pool. Results are canonical msgpack: keys
// sorted, integers shortest.
//
//	msg  {a: {b: 2}, c: "X", d: [...]}     view fields: a.b -> slot 0, c -> slot 1
//	      └─ a: descend ─ b: slot 0       WHERE a.b > 1 AND lower(c) = 'x'
//	      └─ c: slot 1                     evaluates slot 0 and slot 1 only
//	      └─ d: Skip
//
// # Types and nulls
//
// SQL and JSON disagree in places; these rules follow what Satori's
// users, who write JSON, expect, and SQL where JSON has no opinion:
//
//   - A missing field is null; a message that is not a map, or not valid
//     msgpack, is dropped. Comparisons and arithmetic with null are null,
//     AND and OR are three-valued, and WHERE keeps a message only when
//     it is true. IS NULL is true for missing fields and nulls.
//   - Values of different types are never equal and have no order: '5' =
//     5 is false, '5' != 5 true and '5' < 6 null (no coercion). Integers
//     and floats are one type, numbers: 1 = 1.0. Booleans order false
//     first; strings and binary by bytes. Arrays and maps are only = or
//     != (deep equality of the canonical encoding).
//   - Arithmetic is on numbers only, anything else gives null (+ does not
//     concatenate). Integers stay exact int64 while the result is exact:
//     6 / 2 is 3 but 7 / 2 is 3.5 (as in JavaScript, not SQL's integer
//     division); an overflow becomes a float. A division or remainder by
//     zero, or a float that is not finite, is null. An unsigned integer
//     past int64 is read as a float.
//   - round, floor and ceil give an integer when the result fits one;
//     round(x, d) rounds half away from zero to d decimals. length counts
//     characters (bytes of binary, items of an array); substr counts
//     characters from 1 as SQL's SUBSTRING does.
//   - A result field not named with AS is named by a field's last segment
//     (SELECT a.b gives "b") or by the expression's text (count(*)).
//
// # Aggregates
//
// A view aggregates when its select list calls an aggregate or it has a
// GROUP BY. WHERE filters before aggregating; each group (one when there
// is no GROUP BY; 1 and 1.0 are one group, null is a group) gives one
// message per period, and a period without input gives none. COUNT(x),
// SUM, AVG, MIN and MAX leave nulls out; SUM and AVG take numbers only
// and are null when there were none; MIN and MAX order booleans before
// numbers before strings before binary. FIRST_VALUE and LAST_VALUE keep
// nulls. A field outside any aggregate is the group's last message's
// (SELECT who, count(*) ... GROUP BY who); SELECT * ... GROUP BY k is
// each group's last message. MERGE(*) is the last value of every field
// seen (up to 1024 fields per group): unnamed, its fields make the
// result (beside the other items, which win over them); with AS it is
// one field. A period holds at most MaxGroups groups.
//
// # Cost
//
// What a view costs per message is bounded. LIKE never backtracks: its
// segments between %s are each found at their leftmost place (like.go),
// linear but for a segment with _ longer than 64 characters, which only
// a pattern taken from the message can have, at most len(s) * len(p).
// And every message has a Budget of work units (a byte read by LIKE or
// a string function, a node evaluated): past it the Evaluator gives up,
// Match and Append drop the message and Err is ErrBudget, so that one
// message cannot hold a core for longer than about 20-40 ms, whatever
// the statement and the message are.
//
// # Why a hand-written parser
//
// Two maintained SQL parser modules were weighed: vitess.io/vitess's
// sqlparser and its older extract github.com/xwb1989/sqlparser (MySQL's
// grammar, generated by goyacc). Neither fits well: they parse MySQL,
// which has no == (apps send object.id == 0); their errors give a byte
// position near the end of the token that failed, not the column of the
// fault; vitess brings a
// dependency tree far past what the edge carries for one feature, and
// the extract is unmaintained since 2018. Both would still need a second
// pass to turn their large AST into something evaluable on msgpack, and
// to refuse the MySQL the edge does not run (joins, subqueries). The
// grammar here is small: a lexer and a recursive descent parser of about
// 500 lines give exact columns, case-insensitive keywords, bounded
// nesting and no dependency, and are fuzzed like every decoder.
package view
