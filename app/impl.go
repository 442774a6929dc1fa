package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"path/filepath"

	"github.com/custodian-dev/custodian/asdd"
	"github.com/custodian-dev/custodian/asdd/effects"
	"github.com/custodian-dev/custodian/impl"
	"github.com/custodian-dev/custodian/reason"
	"github.com/custodian-dev/custodian/store"
	"github.com/custodian-dev/custodian/wire"
)

// PlanHash is "sha256:<hex>" of the plan document at path (relative to
// the project root, or absolute inside it), "" when it cannot be read (the
// stale-plan check of a reader: a plan it cannot read is not stale).
func PlanHash(root, path string) string {
	if root == "" || path == "" {
		return ""
	}
	p, err := effects.Open(root)
	if err != nil {
		return ""
	}
	defer p.Close()
	h, _ := planHash(p, root, path)
	return h
}

// planHash hashes the plan document at path by the rules of artifacts
// (effects.Project.Hash, what a proposal's observation reads): a path
// inside the project (absolute ones are taken relative to root), never one
// of the custodian's own files, a regular file of at most
// effects.MaxArtifactBytes, symlinks followed only inside the project, a
// FIFO or device refused without waiting on it. "" when it does not exist.
func planHash(p *effects.Project, root, name string) (string, error) {
	if name == "" {
		return "", nil
	}
	rel := filepath.ToSlash(name)
	if filepath.IsAbs(name) {
		abs, err := filepath.Abs(root)
		var r string
		if err == nil {
			r, err = filepath.Rel(abs, name)
		}
		if err != nil || !filepath.IsLocal(r) {
			return "", reason.New(reason.InvalidInput, "plan %s is outside the project; name a file inside it", name).With("path", name)
		}
		rel = filepath.ToSlash(r)
	}
	rel = path.Clean(rel)
	if err := asdd.CleanPath(rel); err != nil {
		return "", fmt.Errorf("plan %s: %w", name, err)
	}
	h, err := p.Hash(rel)
	if err != nil {
		return "", fmt.Errorf("plan %s: %w", name, err)
	}
	return h, nil
}

// ErrNoImplManifest is task-manifest.sh's complaint about a missing
// manifest.
var ErrNoImplManifest = reason.New(reason.NotFound, "manifest not found at %s. Run --init first.", impl.Key)

// ImplManifest returns the task manifest and its revision.
func (l *Local) ImplManifest(ctx context.Context) (*impl.Manifest, uint64, error) {
	doc, err := l.o.Store.Get(ctx, impl.Key)
	if errors.Is(err, reason.NotFound) || (err == nil && !doc.Exists()) {
		return nil, 0, ErrNoImplManifest
	}
	if err != nil {
		return nil, 0, err
	}
	m, err := impl.Decode(doc.Value)
	if err != nil {
		return nil, 0, err
	}
	return m, doc.Revision, nil
}

// Impl runs one change of the task manifest.
func (l *Local) Impl(ctx context.Context, req wire.ImplRequest) (*wire.ImplResponse, error) {
	now := l.o.Now()
	actor := req.Actor
	if actor == "" {
		actor = "custodian"
	}
	switch impl.Op(req.Op) {
	case impl.OpInit:
		m, err := impl.New(req.PlanPath, req.PlanNumber, req.PlanTitle, now)
		if err != nil {
			return nil, err
		}
		// The plan's hash at decomposition: a plan modified since makes
		// the tasks stale (seed 001; impl --stale, --summary, --continue).
		if l.hasRoot() {
			proj, err := l.project()
			if err != nil {
				return nil, err
			}
			if m.Plan.SHA256, err = planHash(proj, l.o.Root, req.PlanPath); err != nil {
				return nil, err
			}
		}
		v, err := impl.Encode(m)
		if err != nil {
			return nil, err
		}
		why := fmt.Sprintf("init plan %s (%s)", req.PlanNumber, req.PlanPath)
		res, err := l.o.Store.Update(ctx, impl.Key, func(cur store.Document) (store.Change, error) {
			if cur.Exists() && !req.Force {
				return store.Change{}, reason.New(reason.InvalidInput, "manifest already exists at %s. Use --force to overwrite.", impl.Key)
			}
			return store.Change{Value: v, Actor: actor, Reason: why, Events: implEvent("impl.init", map[string]any{"plan": req.PlanNumber, "force": req.Force})}, nil
		}, store.Create())
		if err != nil {
			return nil, err
		}
		return &wire.ImplResponse{Revision: res.Revision, Message: "Manifest initialized at " + impl.Key}, nil
	case impl.OpAddTask:
		// As in the script, a missing manifest is reported before bad
		// arguments: they are checked inside the update.
		var nt impl.NewTask
		why := fmt.Sprintf("add-task %s to phase %s", req.TaskID, req.Phase)
		res, err := l.implUpdate(ctx, actor, why, func(m *impl.Manifest) ([]store.Event, error) {
			if req.TaskID == "" || req.Phase == "" || req.Description == "" {
				return nil, reason.New(reason.InvalidInput, "--add-task requires --task-id, --phase, and --description")
			}
			phase, err := impl.ParsePhase(req.Phase)
			if err != nil {
				return nil, err
			}
			deps := req.DependsOn
			if deps == "" {
				deps = "none"
			}
			dependsOn, err := impl.ParseDependsOn(deps)
			if err != nil {
				return nil, err
			}
			nt = impl.NewTask{ID: req.TaskID, Phase: phase, Description: req.Description, DependsOn: dependsOn, BoundedContexts: impl.ParseBoundedContexts(req.BoundedContexts)}
			if err := m.AddTask(nt, now); err != nil {
				return nil, err
			}
			return implEvent("impl.task_added", map[string]any{"id": nt.ID, "phase": nt.Phase}), nil
		})
		if err != nil {
			return nil, err
		}
		return &wire.ImplResponse{Revision: res.Revision, ID: nt.ID, Phase: nt.Phase, Message: fmt.Sprintf("Added task %s to phase %d", nt.ID, nt.Phase)}, nil
	case impl.OpUpdateStatus:
		var tr impl.Transition
		res, err := l.implUpdate(ctx, actor, fmt.Sprintf("update-status %s to %s", req.TaskID, req.Status), func(m *impl.Manifest) ([]store.Event, error) {
			if req.TaskID == "" || req.Status == "" {
				return nil, reason.New(reason.InvalidInput, "--update-status requires --task-id and --status")
			}
			status, err := impl.ParseStatus(req.Status)
			if err != nil {
				return nil, err
			}
			u := impl.StatusUpdate{ID: req.TaskID, Status: status, Branch: req.Branch, CheckResults: req.CheckResults, Error: req.Error}
			if tr, err = m.UpdateStatus(u, now); err != nil {
				return nil, err
			}
			return implEvent("impl.status_changed", tr), nil
		})
		if err != nil {
			return nil, err
		}
		return &wire.ImplResponse{Revision: res.Revision, Transition: &tr, Message: fmt.Sprintf("Task %s status updated to %s", tr.ID, tr.To)}, nil
	}
	return nil, reason.New(reason.InvalidInput, "unknown task-manifest operation %q (init, add-task, update-status change it)", req.Op)
}

// implUpdate commits f's change to the manifest. f runs on a freshly
// decoded manifest each time the store calls it; an error from f commits
// nothing.
func (l *Local) implUpdate(ctx context.Context, actor, why string, f func(m *impl.Manifest) ([]store.Event, error)) (store.Result, error) {
	return l.update(ctx, impl.Key, func(cur store.Document) (store.Change, error) {
		if !cur.Exists() {
			return store.Change{}, ErrNoImplManifest
		}
		m, err := impl.Decode(cur.Value)
		if err != nil {
			return store.Change{}, err
		}
		events, err := f(m)
		if err != nil {
			return store.Change{}, err
		}
		v, err := impl.Encode(m)
		if err != nil {
			return store.Change{}, err
		}
		return store.Change{Value: v, Actor: actor, Reason: why, Events: events}, nil
	}, store.Create())
}

func implEvent(typ string, data any) []store.Event {
	b, err := json.Marshal(data)
	if err != nil {
		return []store.Event{{Type: typ}}
	}
	return []store.Event{{Type: typ, Data: b}}
}
