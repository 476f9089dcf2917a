// Command report-trim keeps, from a ginkgo JSON report of a focused e2e run, only the specs that
// ran (and the suite's setup nodes), and writes them back as JSON and as JUnit XML with ginkgo's
// own JUnit writer, configured as Kubernetes' e2e framework configures it for its junit_01.xml
// (no failure message attribute, no labels), except that the JUnit file carries no timelines at
// all: a failed spec's timeline holds the framework's whole log (hundreds of kB each), and the
// JUnit files are committed. The failure itself (message, location, progress report) stays; the
// timelines stay in the JSON report. A focused run of the e2e binary reports every one of its
// ~7,600 specs, nearly all "skipped"; without them the JUnit file of one run is a few kB.
//
//	report-trim --in report.json --json trimmed.json --junit junit.xml
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"os"
	"slices"
	"strings"

	"github.com/onsi/ginkgo/v2/reporters"
	"github.com/onsi/ginkgo/v2/types"
)

func main() {
	in := flag.String("in", "", "ginkgo JSON report (an array of suite reports)")
	jsonOut := flag.String("json", "", "where to write the trimmed JSON report")
	junitOut := flag.String("junit", "", "where to write the trimmed JUnit XML report")
	flag.Parse()
	if *in == "" || *jsonOut == "" || *junitOut == "" {
		fmt.Fprintln(os.Stderr, "usage: report-trim --in report.json --json out.json --junit out.xml")
		os.Exit(2)
	}
	data, err := os.ReadFile(*in)
	if err != nil {
		fail(err)
	}
	var reports []types.Report
	if err := json.Unmarshal(data, &reports); err != nil {
		fail(fmt.Errorf("reading %s: %w", *in, err))
	}
	if len(reports) != 1 {
		fail(fmt.Errorf("%s holds %d suite reports, want 1", *in, len(reports)))
	}
	report := reports[0]
	report.SpecReports = slices.DeleteFunc(report.SpecReports, notRun)
	// By full name, as the e2e framework sorts its JUnit report.
	slices.SortFunc(report.SpecReports, func(a, b types.SpecReport) int {
		if c := strings.Compare(a.FullText(), b.FullText()); c != 0 {
			return c
		}
		return a.StartTime.Compare(b.StartTime)
	})
	if err := reporters.GenerateJSONReport(report, *jsonOut); err != nil {
		fail(err)
	}
	config := reporters.JunitReportConfig{
		OmitTimelinesForSpecState: types.SpecStatePassed | types.SpecStateSkipped | types.SpecStateFailureStates,
		OmitCapturedStdOutErr:     true,
		OmitFailureMessageAttr:    true,
		OmitSpecLabels:            true,
	}
	if err := reporters.GenerateJUnitReportWithConfig(report, *junitOut, config); err != nil {
		fail(err)
	}
}

// notRun: a spec the focus left out is reported skipped, with no attempt made.
func notRun(spec types.SpecReport) bool {
	return spec.State == types.SpecStateSkipped && spec.NumAttempts == 0
}

func fail(err error) {
	fmt.Fprintln(os.Stderr, "report-trim:", err)
	os.Exit(1)
}
