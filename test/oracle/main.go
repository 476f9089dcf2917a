// The oracle for the differential tests in test/oracle/oracle.test.ts: Go's own parsers answer
// for the inputs the TypeScript side parses. One JSON request per stdin line, one JSON answer per
// stdout line, in order:
//
//	{"op":"quantity","in":"1.5Gi"}  apimachinery resource.ParseQuantity: error, String(), Value(), format
//	{"op":"duration","in":"1h"}     time.ParseDuration: error, nanoseconds, Duration.String()
//	{"op":"float","in":"1e6"}       strconv.ParseFloat(in, 64): error, bits, FormatFloat(v, 'g', -1, 64)
//	{"op":"int","in":"0x10"}        strconv.ParseInt(in, 0, 64): error, value
//	{"op":"bool","in":"T"}          strconv.ParseBool: error, value
//	{"op":"quote","in":"a\tb"}      strconv.Quote
//	{"op":"flag","kind":"float","in":"x"}  the flag package's error for -v=<in> of that kind, and the value's String()
//	{"op":"printable"}              the code point ranges strconv.IsPrint accepts, as JSON [[lo,hi],...]
package main

import (
	"bufio"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"math"
	"os"
	"strconv"
	"time"
	"unicode"

	"k8s.io/apimachinery/pkg/api/resource"
)

type request struct {
	Op   string `json:"op"`
	Kind string `json:"kind,omitempty"`
	In   string `json:"in"`
}

type answer struct {
	Err    string `json:"err,omitempty"`
	Out    string `json:"out,omitempty"`
	Value  string `json:"value,omitempty"`
	Format string `json:"format,omitempty"`
	// Range is true when strconv reported ErrRange (as opposed to ErrSyntax).
	Range bool `json:"range,omitempty"`
}

func main() {
	in := bufio.NewReaderSize(os.Stdin, 1<<20)
	out := bufio.NewWriterSize(os.Stdout, 1<<20)
	defer out.Flush()
	enc := json.NewEncoder(out)
	enc.SetEscapeHTML(false)
	for {
		line, err := in.ReadBytes('\n')
		if len(line) > 0 {
			var req request
			if jerr := json.Unmarshal(line, &req); jerr != nil {
				fmt.Fprintln(os.Stderr, "oracle: bad request:", jerr)
				os.Exit(2)
			}
			if eerr := enc.Encode(respond(req)); eerr != nil {
				os.Exit(2)
			}
			// Answer each line at once when the input is interactive; batch otherwise.
			if in.Buffered() == 0 {
				out.Flush()
			}
		}
		if err == io.EOF {
			return
		}
		if err != nil {
			fmt.Fprintln(os.Stderr, "oracle:", err)
			os.Exit(2)
		}
	}
}

func respond(req request) answer {
	switch req.Op {
	case "quantity":
		q, err := resource.ParseQuantity(req.In)
		if err != nil {
			return answer{Err: err.Error()}
		}
		return answer{Out: q.String(), Value: strconv.FormatInt(q.Value(), 10), Format: string(q.Format)}
	case "duration":
		d, err := time.ParseDuration(req.In)
		if err != nil {
			return answer{Err: err.Error()}
		}
		return answer{Out: d.String(), Value: strconv.FormatInt(int64(d), 10)}
	case "float":
		f, err := strconv.ParseFloat(req.In, 64)
		a := answer{Out: strconv.FormatFloat(f, 'g', -1, 64), Value: strconv.FormatUint(math.Float64bits(f), 16)}
		if err != nil {
			a.Err = err.Error()
			a.Range = errors.Is(err, strconv.ErrRange)
		}
		return a
	case "int":
		i, err := strconv.ParseInt(req.In, 0, 64)
		if err != nil {
			return answer{Err: err.Error(), Range: errors.Is(err, strconv.ErrRange)}
		}
		return answer{Value: strconv.FormatInt(i, 10)}
	case "bool":
		b, err := strconv.ParseBool(req.In)
		if err != nil {
			return answer{Err: err.Error()}
		}
		return answer{Value: strconv.FormatBool(b)}
	case "quote":
		return answer{Out: strconv.Quote(req.In)}
	case "flag":
		return parseFlag(req.Kind, req.In)
	case "printable":
		return answer{Out: printableRanges()}
	}
	return answer{Err: "oracle: unknown op " + strconv.Quote(req.Op)}
}

func parseFlag(kind, in string) answer {
	fs := flag.NewFlagSet("oracle", flag.ContinueOnError)
	fs.SetOutput(io.Discard)
	switch kind {
	case "float":
		fs.Float64("v", 0, "")
	case "int":
		fs.Int("v", 0, "")
	case "bool":
		fs.Bool("v", false, "")
	case "duration":
		fs.Duration("v", 0, "")
	case "string":
		fs.String("v", "", "")
	default:
		return answer{Err: "oracle: unknown flag kind " + strconv.Quote(kind)}
	}
	if err := fs.Parse([]string{"-v=" + in}); err != nil {
		return answer{Err: err.Error()}
	}
	return answer{Out: fs.Lookup("v").Value.String()}
}

func printableRanges() string {
	var ranges [][2]rune
	for r := rune(0); r <= unicode.MaxRune; r++ {
		if !strconv.IsPrint(r) {
			continue
		}
		if n := len(ranges); n > 0 && ranges[n-1][1] == r-1 {
			ranges[n-1][1] = r
		} else {
			ranges = append(ranges, [2]rune{r, r})
		}
	}
	out, _ := json.Marshal(ranges)
	return string(out)
}
