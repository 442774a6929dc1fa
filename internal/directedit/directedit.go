// Package directedit is the custodian's side of a direct edit (docs/store.md
// "Direct edits"): the file store finds a state file changed behind the
// custodian's back on every open (and the daemon's watcher at once) and
// settles it by the project's policy; Configure reads the policy from
// .asdd/config.yaml and tells the user what happened — a line on the given
// writer and, for an edit not adopted, an escalation notice under
// .asdd/escalations/. The CLI and the daemon open their file stores with it.
package directedit

import (
	"bytes"
	"fmt"
	"io"
	"os"
	"path"
	"strings"
	"sync"
	"syscall"

	"go.yaml.in/yaml/v3"

	appl "github.com/custodian-dev/custodian/app"
	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/internal/atomicfile"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store/file"
)

// EscalationsDir is where escalation notices are written.
const EscalationsDir = ".asdd/escalations"

// Policy reads direct_edits from the project's config without
// the rest of it (a store opens for commands that never read the config).
func Policy(root string) (file.DirectEditPolicy, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return "", nil // no project yet: the store reports it
	}
	defer r.Close()
	f, err := r.OpenFile(asdd.ConfigPath, os.O_RDONLY|syscall.O_NONBLOCK, 0)
	if err != nil {
		return file.DirectEditAdopt, nil // no config: the defaults
	}
	defer f.Close()
	if fi, err := f.Stat(); err != nil || !fi.Mode().IsRegular() {
		return "", reason.New(reason.InvalidInput, "%s is not a regular file", asdd.ConfigPath)
	}
	b, err := io.ReadAll(io.LimitReader(f, 4<<20))
	if err != nil {
		return "", fmt.Errorf("read %s: %w", asdd.ConfigPath, err)
	}
	var c struct {
		DirectEdits string `yaml:"direct_edits"`
	}
	if err := yaml.Unmarshal(b, &c); err != nil {
		return file.DirectEditAdopt, nil // the config's own parser names the problem
	}
	switch c.DirectEdits {
	case "", "adopt":
		return file.DirectEditAdopt, nil
	case "reject":
		return file.DirectEditReject, nil
	}
	return "", reason.New(reason.InvalidInput, "%s: direct_edits: %q: want adopt or reject", asdd.ConfigPath, c.DirectEdits)
}

// Configure sets a file store's direct-edit policy and report for
// the project at root; reports go to out.
func Configure(opts *file.Options, root string, out io.Writer) error {
	policy, err := Policy(root)
	if err != nil {
		return err
	}
	opts.DirectEdits = policy
	// The documents' rules, and for a hand edit of the ASDD manifest
	// one more: nothing the rules own may change.
	opts.Validate = appl.DocumentRules.Validate
	opts.DirectEditRule = func(key string, prev, next []byte) error {
		if key == asdd.Key && prev != nil {
			return asdd.CheckDirectEdit(prev, next)
		}
		return nil
	}
	var mu sync.Mutex
	opts.OnDirectEdit = func(e file.DirectEdit) {
		mu.Lock()
		defer mu.Unlock()
		reportDirectEdit(root, out, e)
	}
	return nil
}

// reportDirectEdit prints what became of a direct edit and writes the
// escalation notice of one not adopted.
func reportDirectEdit(root string, out io.Writer, e file.DirectEdit) {
	if e.Adopted {
		merged := ""
		if e.Base > 0 && e.Base+1 < e.Revision {
			merged = fmt.Sprintf("; made on revision %d, its own change merged onto revision %d", e.Base, e.Revision-1)
		}
		fmt.Fprintf(out, "direct edit of %s adopted as revision %d by %s%s (direct_edits: %s)\n", e.Key, e.Revision, file.DirectEditActor, merged, e.Policy)
		return
	}
	if e.Unchanged {
		fmt.Fprintf(out, "direct edit of %s made on revision %d changes nothing revision %d lacks: nothing adopted, nothing lost (direct_edits: %s)\n", e.Key, e.Base, e.Revision, e.Policy)
		return
	}
	notice, err := writeDirectEditNotice(root, e)
	where := "escalation: " + notice
	if err != nil {
		where = "escalation notice not written: " + err.Error()
	}
	fmt.Fprintf(out, "direct edit of %s rejected (%s: %s): kept at %s; %s keeps revision %d; %s (direct_edits: %s)\n",
		e.Key, codeOrDash(e.Code), oneLine(e.Reason), e.Aside, e.Key, e.Revision, where, e.Policy)
}

func oneLine(s string) string {
	return strings.Join(strings.Fields(s), " ")
}

// writeDirectEditNotice writes the escalation notice of a rejected direct
// edit and returns its path relative to the project.
func writeDirectEditNotice(root string, e file.DirectEdit) (string, error) {
	r, err := os.OpenRoot(root)
	if err != nil {
		return "", err
	}
	defer r.Close()
	if err := r.MkdirAll(EscalationsDir, 0o755); err != nil {
		return "", err
	}
	name := path.Join(EscalationsDir, "direct-edit-"+e.Time.UTC().Format("20060102T150405.000000000Z")+".md")
	var b bytes.Buffer
	fmt.Fprintf(&b, "# Escalation — direct edit of %s rejected\n\n", e.Key)
	fmt.Fprintf(&b, "- Status: OPEN\n")
	fmt.Fprintf(&b, "- Failure mode category: direct edit (a state file was written behind the custodian)\n")
	fmt.Fprintf(&b, "- Document: %s (keeps its committed revision %d)\n", e.Key, e.Revision)
	fmt.Fprintf(&b, "- Edited file kept at: %s\n", e.Aside)
	fmt.Fprintf(&b, "- Policy: direct_edits: %s\n", e.Policy)
	fmt.Fprintf(&b, "- Raised: %s\n", e.Time.UTC().Format("2006-01-02T15:04:05Z"))
	fmt.Fprintf(&b, "\n## Why it was rejected\n\n%s: %s\n", codeOrDash(e.Code), oneLine(e.Reason))
	switch {
	case len(e.Patch) == 0:
	case e.Code == string(reason.Conflict) && e.Base > 0:
		fmt.Fprintf(&b, "\n## The edit (RFC 6902 patch from revision %d, the one it was made on)\n\n    %s\n", e.Base, e.Patch)
	default:
		fmt.Fprintf(&b, "\n## The edit (RFC 6902 patch from the committed value)\n\n    %s\n", e.Patch)
	}
	fmt.Fprintf(&b, "\n## Resolution\n\nMake the change through the custodian (its command, or `custodian rollback`), so that it is checked and journaled; then remove the file kept aside. Nothing was lost: the edited file is kept as it was written.\n")
	if err := atomicfile.Write(r, name, b.Bytes(), 0o644); err != nil {
		return "", err
	}
	return name, nil
}

func codeOrDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
