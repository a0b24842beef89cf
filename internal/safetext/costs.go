package safetext

import (
	"fmt"
	"reflect"
	"regexp"
	"strings"
)

// A cost reckons, from a call's arguments and before it runs, how many
// bytes it would build; an error refuses the call outright.
type cost func(args []any) (int, error)

// callCost is charged for every call, so a loop of calls that build
// nothing still ends once the budget is spent.
const callCost = 16

// growth is how many times the size of its arguments a function builds
// at most when no rule of its own says otherwise (escaping, JSON, a
// caller's function).
const growth = 6

// small are functions whose result is a fixed size, a number, a truth
// value or one of their arguments.
var small = words(`get hasKey dig default ternary coalesce first last mustFirst mustLast empty kindOf typeOf kindIs typeIs typeIsLike
	has mustHas deepEqual all any add add1 add1f addf sub subf mul mulf div divf mod max maxf min minf biggest round floor ceil
	int int64 float64 toDecimal atoi contains hasPrefix hasSuffix regexMatch mustRegexMatch semverCompare semver
	sha1sum sha256sum sha512sum adler32sum uuidv4 now ago duration durationRound date dateInZone date_in_zone htmlDate
	htmlDateInZone unixEpoch toDate mustToDate dateModify date_modify mustDateModify must_date_modify isAbs osIsAbs fail
	randInt hello plural unset`)

// rules are the functions whose result can be much larger than their
// arguments: each reckons its own.
var rules = map[string]cost{
	"repeat": func(a []any) (int, error) { return times(toInt(arg(a, 0)), len(str(arg(a, 1)))), nil },
	"indent": indentCost, "nindent": indentCost,
	"wrap": func(a []any) (int, error) { return wrapCost(toInt(arg(a, 0)), 1, str(arg(a, 1))), nil },
	"wrapWith": func(a []any) (int, error) {
		return wrapCost(toInt(arg(a, 0)), len(str(arg(a, 1))), str(arg(a, 2))), nil
	},
	"replace": func(a []any) (int, error) {
		return replaceCost(strings.Count(str(arg(a, 2)), str(arg(a, 0))), str(arg(a, 1)), str(arg(a, 2))), nil
	},
	"regexReplaceAll": regexReplaceCost(true), "mustRegexReplaceAll": regexReplaceCost(true),
	"regexReplaceAllLiteral": regexReplaceCost(false), "mustRegexReplaceAllLiteral": regexReplaceCost(false),
	"join":   joinCost,
	"printf": printfCost,
	"until":  func(a []any) (int, error) { return listCost(toInt(arg(a, 0))) },
	"untilStep": func(a []any) (int, error) {
		return listCost(steps(toInt(arg(a, 0)), toInt(arg(a, 1)), toInt(arg(a, 2))))
	},
	"seq":          seqCost,
	"randAlphaNum": randCost(1), "randAlpha": randCost(1), "randNumeric": randCost(1), "randAscii": randCost(1), "randBytes": randCost(2),
	"split": splitCost, "splitList": splitCost, "regexSplit": regexPiecesCost, "mustRegexSplit": regexPiecesCost,
	"regexFindAll": regexPiecesCost, "mustRegexFindAll": regexPiecesCost,
	"splitn": func(a []any) (int, error) { return pieces(min(toInt(arg(a, 1)), MaxList), str(arg(a, 2))), nil },
	// set and merge add to a map in place: only what they add counts.
	"set":   func(a []any) (int, error) { return sizeOf(a[min(1, len(a)):], MaxString), nil },
	"merge": addedCost, "mustMerge": addedCost, "mergeOverwrite": addedCost, "mustMergeOverwrite": addedCost,
}

func addedCost(a []any) (int, error) { return sizeOf(a[min(1, len(a)):], MaxString), nil }

// costOf is the cost of calling the function name.
func costOf(name string) cost {
	if r, ok := rules[name]; ok {
		return func(a []any) (int, error) {
			n, err := r(a)
			return n + callCost, err
		}
	}
	if small[name] {
		return func([]any) (int, error) { return callCost, nil }
	}
	return func(a []any) (int, error) { return times(growth, sizeOf(a, MaxString)) + callCost, nil }
}

func words(s string) map[string]bool {
	out := map[string]bool{}
	for _, w := range strings.Fields(s) {
		out[w] = true
	}
	return out
}

func arg(a []any, i int) any {
	if i < len(a) {
		return a[i]
	}
	return nil
}

func str(v any) string {
	if s, ok := v.(string); ok {
		return s
	}
	return fmt.Sprint(v)
}

// toInt reads a count the way Sprig's functions take it (int, or any
// number); anything else counts as nothing.
func toInt(v any) int {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return clampInt(rv.Int())
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return clampInt(int64(min(rv.Uint(), uint64(MaxString)*4)))
	case reflect.Float32, reflect.Float64:
		return clampInt(int64(max(min(rv.Float(), float64(MaxString)*4), -float64(MaxString)*4)))
	}
	return 0
}

// clampInt keeps a count inside what the bounds can tell apart, so no
// product overflows.
func clampInt(n int64) int {
	const limit = int64(MaxString) * 4
	return int(max(min(n, limit), -limit))
}

// times is a×b, saturating past MaxString (negatives count as nothing).
func times(a, b int) int {
	if a <= 0 || b <= 0 {
		return 0
	}
	if a > (MaxString+1)/b {
		return MaxString + 1
	}
	return a * b
}

func indentCost(a []any) (int, error) {
	s := str(arg(a, 1))
	return len(s) + times(toInt(arg(a, 0)), strings.Count(s, "\n")+1), nil
}

// wrapCost is a string of len(s) with a separator of sep bytes every
// width characters.
func wrapCost(width, sep int, s string) int {
	return len(s) + times(len(s)/max(width, 1)+1, sep+1)
}

// replaceCost is s with each of n matches replaced by repl (an empty
// pattern matches between every character).
func replaceCost(n int, repl, s string) int {
	return len(s) + times(n+1, len(repl))
}

// regexReplaceCost reckons regexReplaceAll(regex, s, repl): each match
// adds repl, and with expansion each $group reference adds at most the
// whole of s across all matches (matches do not overlap).
func regexReplaceCost(expand bool) cost {
	return func(a []any) (int, error) {
		re, err := regexp.Compile(str(arg(a, 0)))
		if err != nil {
			return 0, nil // the function itself reports it
		}
		s, repl := str(arg(a, 1)), str(arg(a, 2))
		n := len(re.FindAllStringIndex(s, -1))
		refs := 0
		if expand {
			refs = strings.Count(repl, "$")
		}
		return replaceCost(n, repl, s) + times(refs, len(s)), nil
	}
}

// joinCost reckons join(sep, list): every item as a string, and the
// separator between them.
func joinCost(a []any) (int, error) {
	items := sizeOf(arg(a, 1), MaxString)
	n := count(arg(a, 1))
	return items + times(n, len(str(arg(a, 0)))), nil
}

// count is how many items a list or map holds (1 for anything else).
func count(v any) int {
	rv := reflect.ValueOf(v)
	switch rv.Kind() {
	case reflect.Slice, reflect.Array, reflect.Map:
		return rv.Len()
	}
	return 1
}

// printfVerb is one verb of a format: flags, an argument index, a width
// and a precision (each a number, or * to take it from an argument), an
// argument index and the verb's letter.
var printfVerb = regexp.MustCompile(`%[-+# 0]*(?:\[(\d+)\])?(\d+|\*)?(?:\.(?:\[(\d+)\])?(\d+|\*)?)?(?:\[(\d+)\])?([a-zA-Z%])?`)

// printfCost reckons printf(format, args...): the format, what the
// arguments print as, and every width and precision it asks, literal or
// taken from an argument (*), negative ones (left-justified) as much as
// positive ones.
func printfCost(a []any) (int, error) {
	format := str(arg(a, 0))
	total := len(format) + times(growth, sizeOf(a[min(1, len(a)):], MaxString))
	next := 1 // the argument the next * or verb takes
	at := func(index string) {
		if index != "" {
			next = 0
			fmt.Sscan(index, &next)
		}
	}
	amount := func(w string) int {
		switch {
		case w == "*":
			n := toInt(arg(a, next))
			next++
			return max(n, -n)
		case len(w) > 7:
			return MaxString + 1
		case w != "":
			n := 0
			fmt.Sscan(w, &n)
			return n
		}
		return 0
	}
	for _, m := range printfVerb.FindAllStringSubmatch(format, -1) {
		if m[6] == "%" {
			continue
		}
		at(m[1])
		total += amount(m[2])
		at(m[3])
		total += amount(m[4])
		at(m[5])
		next++
	}
	return min(total, MaxString+1), nil
}

func listCost(n int) (int, error) {
	if n > MaxList {
		return 0, fmt.Errorf("%w: the list would have over %d items", errBudget, MaxList)
	}
	return times(max(n, 0), 8), nil
}

func seqCost(a []any) (int, error) {
	n := 0
	switch len(a) {
	case 1:
		n = toInt(a[0])
	case 2:
		n = steps(toInt(a[0]), toInt(a[1]), 1)
	case 3:
		n = steps(toInt(a[0]), toInt(a[2]), toInt(a[1]))
	}
	if n > MaxList {
		return 0, fmt.Errorf("%w: the sequence would have over %d items", errBudget, MaxList)
	}
	return times(max(n, 0), 12), nil
}

// steps is how many items counting from start to stop by step makes, in
// floating point so that no difference overflows.
func steps(start, stop, step int) int {
	if step == 0 {
		return 0
	}
	n := (float64(stop) - float64(start)) / float64(step)
	switch {
	case n < 0:
		return 0
	case n >= MaxList:
		return MaxList + 1
	}
	return int(n) + 1
}

func randCost(per int) cost {
	return func(a []any) (int, error) { return times(toInt(arg(a, 0)), per), nil }
}

// pieces reckons a split of s into n pieces: each a string header and a
// map entry or list slot besides its bytes.
func pieces(n int, s string) int {
	return len(s) + times(max(n, 1), 64)
}

func splitCost(a []any) (int, error) {
	sep, s := str(arg(a, 0)), str(arg(a, 1))
	n := len(s) + 1
	if sep != "" {
		n = strings.Count(s, sep) + 1
	}
	return pieces(n, s), nil
}

// regexPiecesCost reckons regexSplit and regexFindAll(regex, s, n).
func regexPiecesCost(a []any) (int, error) {
	s := str(arg(a, 1))
	return pieces(len(s)+1, s), nil
}

// sizeOf reckons the bytes a value holds: strings by their length, lists
// and maps by their items plus a word or two each, anything else a word.
// It stops counting past limit.
func sizeOf(v any, limit int) int {
	n := 0
	measure(reflect.ValueOf(v), limit, &n, 0)
	return n
}

// maxDepth is how deep sizeOf follows nested values before it counts
// what is left as over the limit.
const maxDepth = 64

func measure(v reflect.Value, limit int, n *int, depth int) {
	if *n > limit {
		return
	}
	if depth > maxDepth {
		*n = limit + 1
		return
	}
	switch v.Kind() {
	case reflect.Invalid:
		*n += 8
	case reflect.String:
		*n += len(v.String()) + 16
	case reflect.Interface, reflect.Pointer:
		*n += 8
		if !v.IsNil() {
			measure(v.Elem(), limit, n, depth+1)
		}
	case reflect.Slice, reflect.Array:
		*n += 24
		if v.Kind() == reflect.Slice && v.Type().Elem().Kind() == reflect.Uint8 {
			*n += v.Len()
			return
		}
		for i := 0; i < v.Len() && *n <= limit; i++ {
			measure(v.Index(i), limit, n, depth+1)
		}
	case reflect.Map:
		*n += 48
		it := v.MapRange()
		for *n <= limit && it.Next() {
			*n += 16
			measure(it.Key(), limit, n, depth+1)
			measure(it.Value(), limit, n, depth+1)
		}
	case reflect.Struct:
		for i := 0; i < v.NumField() && *n <= limit; i++ {
			measure(v.Field(i), limit, n, depth+1)
		}
	default:
		*n += 8
	}
}
