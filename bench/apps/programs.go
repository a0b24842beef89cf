package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// program is a process the bench starts and measures (capstan run, Argo
// CD's components): its output goes to a log file kept for a look after.
type program struct {
	name string
	cmd  *exec.Cmd
	log  string
}

// startProgram starts bin with args and env added to the bench's own,
// logging to capstan-bench-<name>.log in the temporary directory.
func startProgram(name, bin string, args, env []string) (*program, error) {
	p := &program{name: name, log: filepath.Join(os.TempDir(), "capstan-bench-"+name+".log")}
	out, err := os.Create(p.log)
	if err != nil {
		return nil, err
	}
	defer out.Close() // the child holds its own descriptor
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), env...)
	p.cmd.Stdout, p.cmd.Stderr = out, out
	p.cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true} // stopped with its children
	if err := p.cmd.Start(); err != nil {
		return nil, fmt.Errorf("starting %s: %w", name, err)
	}
	return p, nil
}

// stop kills the program and its children.
func (p *program) stop() {
	_ = syscall.Kill(-p.cmd.Process.Pid, syscall.SIGKILL)
	_ = p.cmd.Wait()
}

// programs are the processes of what one run measures.
type programs []*program

func (ps programs) stop() {
	for _, p := range ps {
		p.stop()
	}
}

// logs names the programs' log files.
func (ps programs) logs() string {
	var names []string
	for _, p := range ps {
		names = append(names, p.log)
	}
	return strings.Join(names, ", ")
}

// cpuSeconds is the CPU time of the programs and all their children so far,
// living or ended (render workers, git).
func (ps programs) cpuSeconds() float64 {
	var sum float64
	for _, p := range ps {
		for _, pid := range processTree(p.cmd.Process.Pid) {
			if st, err := readStat(pid); err == nil {
				sum += st.cpu + st.childrenCPU
			}
		}
	}
	return sum
}

// peakRSSParts adds up the peak resident memory of the programs, and
// apart that of their living children (Git, render workers).
func (ps programs) peakRSSParts() (own, children int64) {
	for _, p := range ps {
		for i, pid := range processTree(p.cmd.Process.Pid) {
			if i == 0 {
				own += processRSS(pid)
			} else {
				children += processRSS(pid)
			}
		}
	}
	return own / 1024, children / 1024
}

// stat is what the bench reads of /proc/<pid>/stat.
type stat struct {
	ppid             int
	cpu, childrenCPU float64 // seconds: its own; its ended children's
}

func readStat(pid int) (stat, error) {
	data, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return stat{}, err
	}
	// The command name, in parentheses, may hold spaces: fields count
	// from the last ')', the first after it being the state (field 3).
	fields := strings.Fields(string(data[strings.LastIndexByte(string(data), ')')+1:]))
	if len(fields) < 15 {
		return stat{}, fmt.Errorf("/proc/%d/stat: too few fields", pid)
	}
	var n [5]float64 // ppid, utime, stime, cutime, cstime
	for i, f := range []int{1, 11, 12, 13, 14} {
		if n[i], err = strconv.ParseFloat(fields[f], 64); err != nil {
			return stat{}, fmt.Errorf("/proc/%d/stat: %w", pid, err)
		}
	}
	const ticks = 100 // USER_HZ on Linux
	return stat{ppid: int(n[0]), cpu: (n[1] + n[2]) / ticks, childrenCPU: (n[3] + n[4]) / ticks}, nil
}

// cpuSeconds is the user and system CPU time of process pid so far.
func cpuSeconds(pid int) (float64, error) {
	st, err := readStat(pid)
	return st.cpu, err
}

// processTree is pid and every living descendant of it.
func processTree(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	children := map[int][]int{}
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		if st, err := readStat(child); err == nil {
			children[st.ppid] = append(children[st.ppid], child)
		}
	}
	tree := []int{pid}
	for i := 0; i < len(tree); i++ {
		tree = append(tree, children[tree[i]]...)
	}
	return tree
}
