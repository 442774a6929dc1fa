package reconcile

import (
	"errors"
	"fmt"
	"io"
	"os"
	"path"
	"slices"
	"strings"
)

// EscalationsDir holds the escalation notices the custodian writes when it
// halts a slice (one Markdown file per escalation).
const EscalationsDir = ".asdd/escalations"

// notice is what a rebuild reads from an escalation notice.
type notice struct {
	path   string
	id     string // ESC-SLICE-002-r43
	status string // OPEN or RESOLVED
	slice  string
	phase  string // the phase the slice was halted in
	lkg    string // its last-known-good phase
	mode   string // failure mode code
	reason string // first line of the Reason section
}

// maxNotice bounds how much of a notice is read.
const maxNotice = 64 << 10

// parseNotice reads an escalation notice in the layout asdd.NoticeText
// writes:
//
//	# Escalation ESC-SLICE-002-r43 — Cascading Confidence Failure
//	- Status: OPEN
//	- Slice: SLICE-002 (Settlement Reports)
//	- Failure mode category: Cascading Confidence Failure (CASCADING_CONFIDENCE_FAILURE)
//	- Phase: DESIGN (last known good: VALIDATION)
//	## Reason
//	<one line>
//
// ok is false when the text is not such a notice (no id, slice, status or
// phase).
func parseNotice(b []byte) (n notice, ok bool) {
	lines := strings.Split(strings.ToValidUTF8(string(b), "\uFFFD"), "\n")
	inReason, inHeader := false, true
	for _, raw := range lines {
		line := strings.TrimSpace(strings.TrimRight(raw, "\r"))
		switch {
		case strings.HasPrefix(line, "# Escalation "):
			if f := strings.Fields(strings.TrimPrefix(line, "# Escalation ")); len(f) > 0 && n.id == "" {
				n.id = f[0]
			}
		case strings.HasPrefix(line, "## "):
			inReason = line == "## Reason"
			inHeader = false
		case inReason && line != "" && n.reason == "":
			n.reason = cleanTitle(line)
		case inHeader && strings.HasPrefix(line, "- "):
			// Only the header's list is the notice's record: a "- Status:"
			// further down is text a proposal carried (an uncertainty
			// factor), not the status.
			key, val, found := strings.Cut(strings.TrimPrefix(line, "- "), ": ")
			if !found {
				continue
			}
			val = strings.TrimSpace(val)
			switch key {
			case "Status":
				n.status = firstField(val)
			case "Slice":
				n.slice = firstField(val)
			case "Phase":
				n.phase = firstField(val)
				if _, rest, ok := strings.Cut(val, "(last known good: "); ok {
					n.lkg = firstField(strings.TrimSuffix(rest, ")"))
				}
			case "Failure mode category":
				if i := strings.LastIndex(val, "("); i >= 0 && strings.HasSuffix(val, ")") {
					n.mode = val[i+1 : len(val)-1]
				}
			}
		}
	}
	n.lkg = strings.TrimSuffix(n.lkg, ")")
	ok = n.id != "" && validID().MatchString(n.slice) && n.status != "" && n.phase != ""
	return n, ok
}

func firstField(s string) string {
	if f := strings.Fields(s); len(f) > 0 {
		return f[0]
	}
	return ""
}

// readNotices reads every escalation notice under root.
func readNotices(root *os.Root, res *ScanResult) ([]notice, error) {
	names, err := listDir(root, EscalationsDir, false, res)
	if err != nil {
		return nil, err
	}
	var out []notice
	for _, name := range names {
		p := path.Join(EscalationsDir, name)
		b, err := readLimited(root, p)
		if err != nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s skipped: %v", p, err))
			continue
		}
		n, ok := parseNotice(b)
		if !ok {
			continue
		}
		n.path = p
		out = append(out, n)
	}
	return out, nil
}

func readLimited(root *os.Root, p string) ([]byte, error) {
	f, err := root.Open(p)
	if err != nil {
		return nil, errors.New(errText(err))
	}
	defer f.Close()
	return io.ReadAll(io.LimitReader(f, maxNotice))
}

// applyNotices lets escalation notices correct the slices: an OPEN
// escalation means the slice is halted (the only way out of a halt is a
// resolution, which marks it RESOLVED), a resolved one that the slice
// reached at least the phase it was halted in.
func applyNotices(res *ScanResult, notices []notice, life []string) {
	byID := map[string]*ScannedSlice{}
	for i := range res.Slices {
		byID[res.Slices[i].ID] = &res.Slices[i]
	}
	for _, n := range notices {
		s := byID[n.slice]
		if s == nil {
			res.Warnings = append(res.Warnings, fmt.Sprintf("%s is about slice %s, which has no directory under %s", n.path, n.slice, SpecsDir))
			continue
		}
		switch n.status {
		case "OPEN":
			if s.Status == "BLOCKED" {
				s.BlockReason += fmt.Sprintf("; open escalation %s (%s)", n.id, n.mode)
				s.Evidence = append(s.Evidence, fmt.Sprintf("%s is open: the slice is halted", n.path))
				continue
			}
			s.Status, s.BlockedAtPhase, s.LKGPhase = "BLOCKED", n.phase, n.lkg
			if s.LKGPhase == "" {
				s.LKGPhase = previous(life, n.phase)
			}
			s.BlockReason = fmt.Sprintf("rebuilt from the filesystem: open escalation %s (%s): %s", n.id, n.mode, n.reason)
			s.Evidence = append(s.Evidence, fmt.Sprintf("%s is open: halted at %s", n.path, n.phase))
			for _, f := range []string{"blocked_at_phase", "lkg_phase"} {
				if !slices.Contains(s.Guessed, f) {
					s.Guessed = append(s.Guessed, f)
				}
			}
		case "RESOLVED":
			if s.Status == "BLOCKED" {
				continue
			}
			if i, cur := slices.Index(life, n.phase), slices.Index(life, s.Status); i > cur {
				s.Status = n.phase
				s.Evidence = append(s.Evidence, fmt.Sprintf("%s was resolved: %s reached", n.path, n.phase))
			}
		}
	}
}
