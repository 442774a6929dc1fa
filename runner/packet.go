package runner

import (
	"bufio"
	"bytes"
	"fmt"
	"io/fs"
	"maps"
	"path"
	"regexp"
	"slices"
	"strings"

	"github.com/custodian-dev/custodian/asdd"
)

// Packet is the minimal context an agent starts with (seed 004,
// context-fresh sub-agents): the task, the requirement it serves, the
// relevant local files, the applicable domain terms and the relevant
// steering rules. Everything else is withheld. The runner writes it as a
// JSON file and passes its path in CUSTODIAN_CONTEXT.
type Packet struct {
	Version int          `json:"version"`
	Slice   PacketSlice  `json:"slice"`
	Agent   PacketAgent  `json:"agent"`
	Task    *PacketTask  `json:"task,omitempty"`
	Tasks   []PacketTask `json:"tasks,omitempty"`
	// Requirement is the spec requirement (REQ-NNN) a task serves, with its
	// text from the slice's requirements artifact: the sub-agent verifies
	// its work against it (goal-backward verification).
	Requirement *PacketRequirement `json:"requirement,omitempty"`
	// Files are the slice's artifacts relevant to the run, relative to the
	// project root.
	Files         []string     `json:"files"`
	DomainTerms   []DomainTerm `json:"domain_terms"`
	SteeringRules []string     `json:"steering_rules"`
	// BaseRevision is the manifest revision the run started from: pass it to
	// `custodian propose --base-revision`.
	BaseRevision uint64 `json:"base_revision"`
	// Report says how to hand the result back.
	Report string `json:"report"`
}

// PacketSlice is the slice the agent works on.
type PacketSlice struct {
	ID          string `json:"id"`
	Name        string `json:"name,omitempty"`
	Type        string `json:"type,omitempty"`
	Status      string `json:"status"`
	Description string `json:"description,omitempty"`
}

// PacketAgent is the agent's own gate for this run.
type PacketAgent struct {
	Name              string   `json:"name"`
	Phase             string   `json:"phase"`
	MinConfidence     float64  `json:"min_confidence"`
	ActionIfBelow     string   `json:"action_if_below,omitempty"`
	RequiredArtifacts []string `json:"required_artifacts,omitempty"`
	CompletesPhase    bool     `json:"completes_phase"`
	Attempt           int      `json:"attempt"`
	// UncertaintyThreshold: a score below it needs uncertainty factors.
	UncertaintyThreshold float64 `json:"uncertainty_threshold"`
}

// PacketTask is an implementation task.
type PacketTask struct {
	ID          string   `json:"id"`
	Title       string   `json:"title,omitempty"`
	Wave        int      `json:"wave"`
	DependsOn   []string `json:"depends_on,omitempty"`
	Requirement string   `json:"requirement,omitempty"`
	Status      string   `json:"status,omitempty"`
}

// PacketRequirement is one requirement and where it is written.
type PacketRequirement struct {
	ID     string `json:"id"`
	Source string `json:"source,omitempty"`
	Text   string `json:"text,omitempty"`
}

// DomainTerm is one entry of the ubiquitous language.
type DomainTerm struct {
	Term       string `json:"term"`
	Definition string `json:"definition,omitempty"`
}

// SteeringDir holds the project's steering rules, one file each.
const SteeringDir = ".asdd/steering"

const reportHelp = "Report with `custodian propose --agent $CUSTODIAN_AGENT --slice $CUSTODIAN_SLICE --score S --base-revision N ...`, " +
	"or print a result object as the last line of standard output: " +
	`{"score": 0.9, "artifacts": {"NAME": "PATH"}, "uncertainty_factors": ["..."]} ` +
	"(sub-agents with a task: exit 0 when the task is done)."

// BuildPacket assembles an agent's context packet from the committed
// slice and the project files in fsys (the project root). task is nil for
// a phase agent.
func BuildPacket(fsys fs.FS, s *asdd.Slice, cfg *asdd.Config, ag *asdd.Agent, task *asdd.Task, base uint64, attempt int) *Packet {
	minimum := ag.MinConfidence
	if r, ok := s.RaisedMinimums[ag.Name]; ok && r > minimum {
		minimum = r
	}
	p := &Packet{
		Version: 1,
		Slice:   PacketSlice{ID: s.SliceID, Name: s.Name, Type: s.Type, Status: s.Status, Description: s.Description},
		Agent: PacketAgent{Name: ag.Name, Phase: s.Status, MinConfidence: minimum, ActionIfBelow: ag.ActionIfBelow,
			RequiredArtifacts: ag.RequiredArtifacts, CompletesPhase: ag.CompletesPhase(s.Status), Attempt: attempt,
			UncertaintyThreshold: cfg.UncertaintyThreshold},
		BaseRevision: base,
		Report:       reportHelp,
		Files:        []string{},
		DomainTerms:  []DomainTerm{},
	}
	var focus string
	if task != nil {
		p.Task = &PacketTask{ID: task.ID, Title: task.Title, Wave: task.Wave, DependsOn: task.DependsOn, Requirement: task.Requirement}
		focus = task.Title
		for _, name := range []string{"requirements", "domain_model", "design", "tasks"} {
			if f := s.PhaseData[name]; f != "" && f != asdd.NeedsHumanReview {
				p.Files = append(p.Files, f)
			}
		}
		if task.Requirement != "" {
			req := &PacketRequirement{ID: task.Requirement}
			if src := s.PhaseData["requirements"]; src != "" {
				if b, err := fs.ReadFile(fsys, src); err == nil {
					req.Source = src
					req.Text = RequirementText(b, task.Requirement)
					focus += "\n" + req.Text
				}
			}
			p.Requirement = req
		}
	} else {
		for _, name := range slices.Sorted(maps.Keys(s.PhaseData)) {
			if f := s.PhaseData[name]; f != "" && f != asdd.NeedsHumanReview {
				p.Files = append(p.Files, f)
			}
		}
		for _, t := range s.Tasks {
			p.Tasks = append(p.Tasks, PacketTask{ID: t.ID, Title: t.Title, Wave: t.Wave, DependsOn: t.DependsOn, Requirement: t.Requirement, Status: t.Status})
		}
	}
	slices.Sort(p.Files)
	p.Files = slices.Compact(p.Files)
	for _, name := range []string{"domain_model", "glossary"} {
		src := s.PhaseData[name]
		if src == "" {
			continue
		}
		if b, err := fs.ReadFile(fsys, src); err == nil {
			p.DomainTerms = append(p.DomainTerms, Applicable(DomainTerms(b), focus)...)
		}
	}
	p.SteeringRules = steeringRules(fsys, cfg, ag.Name)
	return p
}

// steeringRules lists the project's steering files and the precedence
// rules that name the agent.
func steeringRules(fsys fs.FS, cfg *asdd.Config, agent string) []string {
	out := []string{}
	if ents, err := fs.ReadDir(fsys, SteeringDir); err == nil {
		for _, e := range ents {
			if !e.IsDir() {
				out = append(out, path.Join(SteeringDir, e.Name()))
			}
		}
	}
	for _, field := range slices.Sorted(maps.Keys(cfg.Steering.Precedence)) {
		order := cfg.Steering.Precedence[field]
		if slices.Contains(order, agent) {
			out = append(out, fmt.Sprintf("%s: %s (the first wins a concurrent change)", field, strings.Join(order, " > ")))
		}
	}
	return out
}

var (
	reqIDRE   = regexp.MustCompile(`\bREQ-[A-Za-z0-9_-]+\b`)
	headingRE = regexp.MustCompile(`^(#{1,6})\s`)
)

// maxRequirement bounds the requirement text put in a packet.
const maxRequirement = 8 << 10

// RequirementText returns the section of a requirements document about id:
// from the first line that names it to the line before the next
// requirement or a heading at the same or a higher level. "" if the
// document does not name it.
func RequirementText(doc []byte, id string) string {
	lines := strings.Split(string(doc), "\n")
	start, level := -1, 7
	for i, l := range lines { // where it names itself, else where it is named
		if startsWithID(l) == id {
			start = i
			break
		}
	}
	if start < 0 {
		for i, l := range lines {
			if containsID(l, id) {
				start = i
				break
			}
		}
	}
	if start < 0 {
		return ""
	}
	if m := headingRE.FindStringSubmatch(lines[start]); m != nil {
		level = len(m[1])
	}
	end := len(lines)
	for i := start + 1; i < len(lines); i++ {
		l := lines[i]
		if m := headingRE.FindStringSubmatch(l); m != nil && len(m[1]) <= level {
			end = i
			break
		}
		if other := startsWithID(l); other != "" && other != id {
			end = i
			break
		}
	}
	text := strings.TrimSpace(strings.Join(lines[start:end], "\n"))
	if len(text) > maxRequirement {
		text = text[:maxRequirement]
	}
	return text
}

func containsID(line, id string) bool {
	for _, m := range reqIDRE.FindAllString(line, -1) {
		if m == id {
			return true
		}
	}
	return false
}

var reqStartRE = regexp.MustCompile(`^\[?(REQ-[A-Za-z0-9_-]+)\b`)

// startsWithID returns the requirement id a line begins with, past list,
// heading, quote and emphasis marks ("## REQ-001 Login", "- **REQ-2**:"),
// or "".
func startsWithID(l string) string {
	l = strings.TrimLeft(l, " \t#-*|>_")
	if m := reqStartRE.FindStringSubmatch(l); m != nil {
		return m[1]
	}
	return ""
}

// maxTerms bounds the domain terms read from one document.
const maxTerms = 500

// DomainTerms reads the ubiquitous language from a domain model: list
// items "- **Term**: definition" or "- Term — definition", and table rows
// "| Term | Definition |", within a section whose heading says "ubiquitous"
// or "glossary" when there is one, otherwise anywhere.
func DomainTerms(doc []byte) []DomainTerm {
	section := termSection(doc)
	var out []DomainTerm
	seen := map[string]bool{}
	sc := bufio.NewScanner(bytes.NewReader(section))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for sc.Scan() && len(out) < maxTerms {
		t, ok := parseTerm(sc.Text())
		if !ok || seen[strings.ToLower(t.Term)] {
			continue
		}
		seen[strings.ToLower(t.Term)] = true
		out = append(out, t)
	}
	return out
}

func termSection(doc []byte) []byte {
	lines := bytes.Split(doc, []byte("\n"))
	for i, l := range lines {
		m := headingRE.FindSubmatch(l)
		if m == nil {
			continue
		}
		low := bytes.ToLower(l)
		if !bytes.Contains(low, []byte("ubiquitous")) && !bytes.Contains(low, []byte("glossary")) {
			continue
		}
		level := len(m[1])
		end := len(lines)
		for j := i + 1; j < len(lines); j++ {
			if n := headingRE.FindSubmatch(lines[j]); n != nil && len(n[1]) <= level {
				end = j
				break
			}
		}
		return bytes.Join(lines[i+1:end], []byte("\n"))
	}
	return doc
}

var tableSepRE = regexp.MustCompile(`^\|?[\s:|-]+\|?$`)

func parseTerm(line string) (DomainTerm, bool) {
	l := strings.TrimSpace(line)
	switch {
	case strings.HasPrefix(l, "|"):
		if tableSepRE.MatchString(l) {
			return DomainTerm{}, false
		}
		cells := strings.Split(strings.Trim(l, "|"), "|")
		if len(cells) < 2 {
			return DomainTerm{}, false
		}
		term := cleanTerm(cells[0])
		if term == "" || strings.EqualFold(term, "term") {
			return DomainTerm{}, false
		}
		return DomainTerm{Term: term, Definition: strings.TrimSpace(cells[1])}, true
	case strings.HasPrefix(l, "- "), strings.HasPrefix(l, "* "):
		l = strings.TrimSpace(l[2:])
		for _, sep := range []string{"**:", ":**", ":", " — ", " - "} {
			if i := strings.Index(l, sep); i > 0 {
				term := cleanTerm(l[:i])
				def := strings.TrimSpace(strings.TrimLeft(l[i+len(sep):], "*: "))
				if term == "" || len(term) > 80 {
					return DomainTerm{}, false
				}
				return DomainTerm{Term: term, Definition: def}, true
			}
		}
	}
	return DomainTerm{}, false
}

func cleanTerm(s string) string {
	return strings.TrimSpace(strings.Trim(strings.TrimSpace(s), "*_`"))
}

// Applicable keeps the terms that focus (a task's title and requirement)
// mentions; with no focus, or when it mentions none, all of them.
func Applicable(terms []DomainTerm, focus string) []DomainTerm {
	if strings.TrimSpace(focus) == "" {
		return terms
	}
	low := strings.ToLower(focus)
	var out []DomainTerm
	for _, t := range terms {
		if strings.Contains(low, strings.ToLower(t.Term)) {
			out = append(out, t)
		}
	}
	if len(out) == 0 {
		return terms
	}
	return out
}
