package version

import (
	"context"
	"io"
	"runtime"
	"runtime/debug"
	"strings"

	"github.com/custodian-dev/custodian/cmd/custodian/internal/cli/cmdutil"
	"github.com/spf13/cobra"
)

// buildDate may be set at link time for release builds:
//
//	go build -ldflags "-X github.com/custodian-dev/custodian/cmd/custodian/internal/cli/version.buildDate=2026-11-25T18:00:00Z" ./cmd/custodian
//
// Without it the version shows the commit's date from the build info.
var buildDate string

// BuildInfo is what custodian version reports.
type BuildInfo struct {
	Version    string `json:"version"`               // module version: v1.2.0 from go install …@v1.2.0, "(devel)" from a clone
	Commit     string `json:"commit,omitempty"`      // vcs.revision, when the build stamped it
	Modified   bool   `json:"modified,omitempty"`    // the work tree had uncommitted changes
	CommitDate string `json:"commit_date,omitempty"` // vcs.time
	BuildDate  string `json:"build_date,omitempty"`  // set with -ldflags (see buildDate)
	Go         string `json:"go"`
	Platform   string `json:"platform"`
}

// ReadBuildInfo reads the binary's own build information.
func ReadBuildInfo() BuildInfo {
	b := BuildInfo{Version: "(unknown)", BuildDate: buildDate, Go: runtime.Version(), Platform: runtime.GOOS + "/" + runtime.GOARCH}
	info, ok := debug.ReadBuildInfo()
	if !ok {
		return b
	}
	if info.Main.Version != "" {
		b.Version = info.Main.Version
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.Commit = s.Value
		case "vcs.time":
			b.CommitDate = s.Value
		case "vcs.modified":
			b.Modified = s.Value == "true"
		}
	}
	return b
}

// String is the one-line form: "custodian v1.2.0 (commit 0123abcd, 2026-11-25T18:00:00Z) go1.26 linux/amd64".
func (b BuildInfo) String() string {
	var parts []string
	if b.Commit != "" {
		c := b.Commit
		if len(c) > 12 {
			c = c[:12]
		}
		if b.Modified {
			c += "-dirty"
		}
		parts = append(parts, "commit "+c)
	}
	if b.CommitDate != "" {
		parts = append(parts, "committed "+b.CommitDate)
	}
	if b.BuildDate != "" {
		parts = append(parts, "built "+b.BuildDate)
	}
	s := "custodian " + b.Version
	if len(parts) > 0 {
		s += " (" + strings.Join(parts, ", ") + ")"
	}
	return s + " " + b.Go + " " + b.Platform
}

// AddVersion adds custodian version and the root's --version flag.
func AddVersion(a *cmdutil.App, root *cobra.Command) {
	root.Version = ReadBuildInfo().String()
	root.SetVersionTemplate("{{.Version}}\n")
	root.Flags().BoolP("version", "v", false, "print the version, commit and build date (as custodian version)")
	root.AddCommand(NewCmd(a, nil))
}

// Options is what `custodian version` was asked to do.
type Options struct {
	App *cmdutil.App
}

// NewCmd returns `custodian version`; it calls runF with its options
// (run when runF is nil).
func NewCmd(app *cmdutil.App, runF func(context.Context, *Options) error) *cobra.Command {
	if runF == nil {
		runF = run
	}
	opts := &Options{App: app}
	return &cobra.Command{
		Use:   "version",
		Short: "Print the version, commit and build date of this binary",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, args []string) error {
			return runF(app.Context(cmd), opts)
		},
	}
}

// run prints the binary's build information.
func run(_ context.Context, opts *Options) error {
	b := ReadBuildInfo()
	return opts.App.Render(b, func(w io.Writer) error {
		_, err := io.WriteString(w, b.String()+"\n")
		return err
	})
}
