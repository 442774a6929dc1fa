//go:build unix

package filelock

import (
	"bufio"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/gofrs/flock"
)

// The lock is the one flock(1) takes: a script's `flock -n` fails while
// Lock holds it, and Held sees a lock a flock(1) process holds.
func TestInteropWithFlockCommand(t *testing.T) {
	if _, err := exec.LookPath("flock"); err != nil {
		t.Skip("flock(1) not installed")
	}
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	for _, name := range []string{"sub/.lock", "."} {
		if name != "." {
			if err := os.Mkdir(filepath.Join(dir, "sub"), 0o755); err != nil {
				t.Fatal(err)
			}
		}
		unlock, err := Lock(root, name)
		if err != nil {
			t.Fatalf("Lock(%s): %v", name, err)
		}
		p := filepath.Join(dir, filepath.FromSlash(name))
		if err := exec.Command("flock", "-n", p, "true").Run(); err == nil {
			t.Fatalf("flock -n %s succeeded while Lock held it", name)
		}
		unlock()
		if out, err := exec.Command("flock", "-n", p, "true").CombinedOutput(); err != nil {
			t.Fatalf("flock -n %s after unlock: %v %s", name, err, out)
		}
	}

	held, err := Held(root, "sub/.lock")
	if err != nil || held {
		t.Fatalf("Held on a free file = %v, %v", held, err)
	}
	cmd := exec.Command("flock", filepath.Join(dir, "sub", ".lock"), "sh", "-c", "echo held; read x")
	in, _ := cmd.StdinPipe()
	out, _ := cmd.StdoutPipe()
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if _, err := bufio.NewReader(out).ReadString('\n'); err != nil {
		t.Fatal(err)
	}
	held, err = Held(root, "sub/.lock")
	in.Close()
	_ = cmd.Wait()
	if err != nil || !held {
		t.Fatalf("Held while flock(1) holds it = %v, %v", held, err)
	}
}

// The lock never lands outside the root: a symlink leaving it is refused,
// and so is a file that is not a regular file or a directory.
func TestRefusesWhatIsNotItsOwn(t *testing.T) {
	dir, outside := t.TempDir(), t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	if err := os.Symlink(filepath.Join(outside, "x.lock"), filepath.Join(dir, "out.lock")); err != nil {
		t.Fatal(err)
	}
	if unlock, err := Lock(root, "out.lock"); err == nil {
		unlock()
		t.Fatal("Lock followed a symlink out of the root")
	}
	if _, err := os.Stat(filepath.Join(outside, "x.lock")); err == nil {
		t.Fatal("Lock created a file outside the root")
	}
	if _, err := Held(root, "out.lock"); err == nil {
		t.Fatal("Held followed a symlink out of the root")
	}
	fifo := filepath.Join(dir, "fifo")
	if err := exec.Command("mkfifo", fifo).Run(); err != nil {
		t.Skip("mkfifo:", err)
	}
	if unlock, err := Lock(root, "fifo"); err == nil {
		unlock()
		t.Fatal("Lock took a FIFO")
	}
	if _, err := Held(root, "fifo"); err == nil {
		t.Fatal("Held probed a FIFO")
	}
}

// Held sees a lock this process holds through another open file (the
// store's probe of its own daemon's pid file), and a lock taken by Lock.
func TestHeldInProcess(t *testing.T) {
	dir := t.TempDir()
	root, err := os.OpenRoot(dir)
	if err != nil {
		t.Fatal(err)
	}
	defer root.Close()
	pid := filepath.Join(dir, "daemon.pid")
	if err := os.WriteFile(pid, []byte("123\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	l := flock.New(pid)
	if err := l.Lock(); err != nil {
		t.Fatal(err)
	}
	if held, err := Held(root, "daemon.pid"); err != nil || !held {
		t.Fatalf("Held while gofrs/flock holds it = %v, %v", held, err)
	}
	if err := l.Unlock(); err != nil {
		t.Fatal(err)
	}
	unlock, err := Lock(root, "daemon.pid")
	if err != nil {
		t.Fatal(err)
	}
	if held, err := Held(root, "daemon.pid"); err != nil || !held {
		t.Fatalf("Held while Lock holds it = %v, %v", held, err)
	}
	unlock()
	if held, err := Held(root, "daemon.pid"); err != nil || held {
		t.Fatalf("Held after unlock = %v, %v", held, err)
	}
}
