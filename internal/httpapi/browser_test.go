package httpapi_test

import (
	"cmp"
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/cdproto/runtime"
	"github.com/chromedp/chromedp"

	sa "github.com/superagents/superagents"
	"github.com/superagents/superagents/internal/config"
	"github.com/superagents/superagents/internal/cost"
)

// findChromium returns the browser to drive, or "" when there is none.
func findChromium() string {
	for _, name := range []string{"chromium", "chromium-browser", "google-chrome"} {
		if path, err := exec.LookPath(name); err == nil {
			return path
		}
	}
	return ""
}

// artifactDir is where a browser test saves its screenshots:
// $SUPERAGENTS_ARTIFACTS/NAME (scripts/test sets it), or a temporary
// directory.
func artifactDir(t *testing.T, name string) string {
	t.Helper()
	dir := t.TempDir()
	if root := os.Getenv("SUPERAGENTS_ARTIFACTS"); root != "" {
		dir = filepath.Join(root, name)
		// This run's screenshots only: a failed step's from an earlier run
		// would mislead.
		if err := os.RemoveAll(dir); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

// needChromium returns the browser to drive, or skips the test when there
// is none (fails it when SUPERAGENTS_REQUIRE_BROWSER=1).
func needChromium(t *testing.T) string {
	t.Helper()
	path := findChromium()
	if path == "" {
		if os.Getenv("SUPERAGENTS_REQUIRE_BROWSER") == "1" {
			t.Fatal("chromium is not installed and SUPERAGENTS_REQUIRE_BROWSER=1: install Debian's chromium package")
		}
		t.Skip("chromium is not installed: the dashboard's browser test is skipped (apt-get install chromium to run it)")
	}
	return path
}

// browser is a headless Chromium a test drives, saving screenshots to
// its artifact directory.
type browser struct {
	t         *testing.T
	ctx       context.Context
	shots     string
	stop      context.CancelFunc
	thrown    []string // the page's uncaught exceptions
	collected chan struct{}
}

// openBrowser starts Chromium; its screenshots go to artifactDir(name).
func openBrowser(t *testing.T, chromium, name string) *browser {
	t.Helper()
	b := &browser{t: t, shots: artifactDir(t, name), collected: make(chan struct{})}
	t.Logf("screenshots in %s", b.shots)
	alloc, stopAlloc := chromedp.NewExecAllocator(context.Background(),
		chromedp.ExecPath(chromium),
		chromedp.Headless,
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.NoFirstRun,
		chromedp.NoDefaultBrowserCheck,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(t.TempDir()),
		chromedp.WindowSize(1440, 900),
	)
	t.Cleanup(stopAlloc)
	b.ctx, b.stop = chromedp.NewContext(alloc)
	// Uncaught exceptions of the page fail the test.
	exceptions := chromedp.Events(b.ctx, runtime.ExceptionThrown)
	go func() {
		defer close(b.collected)
		for ev, err := range exceptions {
			if err != nil {
				return
			}
			b.thrown = append(b.thrown, ev.ExceptionDetails.Text)
		}
	}()
	t.Cleanup(func() { b.stop(); <-b.collected })
	// Each step has a minute; the first starts the browser, whose context
	// must have no deadline.
	if err := chromedp.Do(b.ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return b
}

func (b *browser) shot(name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		png, err := chromedp.CaptureScreenshot()(ctx, tg)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(b.shots, name+".png"), png, 0o644)
	})
}

// run runs one step of the test, with a minute for it; a failed step
// leaves a screenshot.
func (b *browser) run(step string, actions ...chromedp.Action[chromedp.Void]) {
	b.t.Helper()
	ctx, cancel := context.WithTimeout(b.ctx, time.Minute)
	defer cancel()
	if err := chromedp.Do(ctx, actions...); err != nil {
		_ = chromedp.Do(b.ctx, b.shot("failed-"+step))
		b.t.Fatalf("%s: %v", step, err)
	}
}

func (b *browser) eval(expr string) any {
	b.t.Helper()
	v, err := chromedp.Run(b.ctx, chromedp.Evaluate[any](expr))
	if err != nil {
		b.t.Fatalf("evaluate %s: %v", expr, err)
	}
	return v
}

// poll waits until a JavaScript expression holds, for a minute.
func (b *browser) poll(expr string) chromedp.Action[chromedp.Void] {
	return chromedp.Poll[chromedp.Void](expr, chromedp.WithPollingTimeout(time.Minute))
}

// transcriptHas waits until a message of the transcript contains text.
func (b *browser) transcriptHas(text string) chromedp.Action[chromedp.Void] {
	return b.poll(fmt.Sprintf(`[...document.querySelectorAll('#transcript .msg')].some(m => m.textContent.includes(%q))`, text))
}

// connect opens the dashboard and gives it the token.
func (b *browser) connect(h *harness) {
	b.t.Helper()
	b.run("connect",
		chromedp.Navigate(h.url+"/"),
		chromedp.WaitVisible(`#token-input`),
		chromedp.SendKeys(`#token-input`, testToken),
		chromedp.Click(`#token-form button[type=submit]`),
		chromedp.WaitVisible(`#conn[data-state="live"]`),
		b.shot("01-connected"),
	)
	if stored := b.eval(`sessionStorage.getItem('superagents-token')`); stored != testToken {
		b.t.Fatalf("sessionStorage holds %q", stored)
	}
}

// close stops the browser and fails the test if the page threw.
func (b *browser) close() {
	b.t.Helper()
	b.stop()
	<-b.collected
	if len(b.thrown) > 0 {
		b.t.Fatalf("the page threw: %v", b.thrown)
	}
}

// TestDashboardInBrowser drives the dashboard in headless Chromium: it
// connects with the token, launches a task that runs until the test
// opens its gate, watches it run and its transcript grow, sees it
// complete, resumes it, and cancels another one; then it filters the list
// by status and by agent, and finds the resumed and forked tasks marked in
// the agent tree.
func TestDashboardInBrowser(t *testing.T) {
	chromium := needChromium(t)
	// The test model has a price, so that the page shows dollars.
	h := newHarness(t, func(h *harness) {
		h.cfg.Models = map[string]config.Model{"anthropic/claude-test": {Input: 3, Output: 15, CacheRead: 0.3, CacheWrite: 3.75}}
	})
	parent := h.session()
	b := openBrowser(t, chromium, "dashboard")
	run, eval, shot, transcriptHas := b.run, b.eval, b.shot, b.transcriptHas
	countMessages := func() int {
		return int(eval(`document.querySelectorAll('#transcript .msg').length`).(float64))
	}

	b.connect(h)

	gate := h.gate("browser-gate")
	run("launch from the page",
		chromedp.Click(`#launch-open`),
		chromedp.WaitVisible(`#launch-dialog`),
		chromedp.SetValue(`#launch-session`, parent.ID),
		chromedp.SetValue(`#launch-agent`, "general"),
		chromedp.SendKeys(`#launch-description`, "Slow task from the dashboard"),
		chromedp.SendKeys(`#launch-prompt`, "gate: "+string(gate)),
		chromedp.Click(`#launch-form button[type=submit]`),
		chromedp.WaitVisible(`li.task[data-status="running"]`),
		chromedp.WaitVisible(`#detail-status.status-running`),
	)
	list, err := h.store.ListTasks(context.Background(), sa.TaskFilter{ParentSessionID: parent.ID})
	if err != nil || len(list) != 1 || list[0].Description != "Slow task from the dashboard" || list[0].Status != sa.TaskRunning {
		t.Fatalf("the store after launching from the page: %+v, %v", list, err)
	}
	slow := list[0]

	run("watch the transcript while it runs",
		transcriptHas("gate: "),
		chromedp.WaitVisible(`#transcript .call`), // the bash call that waits for the gate
		shot("02-running-transcript"),
	)
	before := countMessages()
	gate.open(t)
	run("see it finish",
		chromedp.WaitVisible(fmt.Sprintf(`li.task[data-id=%q][data-status="completed"]`, slow.ID)),
		transcriptHas("passed browser-gate"),
		chromedp.WaitVisible(`#transcript .msg.tool`),
		chromedp.WaitVisible(`#count-completed[data-count="1"]`),
		shot("03-completed"),
	)
	if after := countMessages(); after <= before {
		t.Fatalf("the transcript did not grow while the task ran: %d messages, then %d", before, after)
	}
	// What the task cost, and its parent with it, as the API prices them.
	detailShows := func(sel, want string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelector(%q)?.textContent === %q`, sel, want),
			chromedp.WithPollingTimeout(time.Minute))
	}
	var slowCost, parentCost cost.PricedTree
	h.ok(http.StatusOK, "GET", "/v1/sessions/"+slow.ID+"/cost", nil, &slowCost)
	h.ok(http.StatusOK, "GET", "/v1/sessions/"+parent.ID+"/cost", nil, &parentCost)
	if slowCost.Cost.USD <= 0 || parentCost.TreeCost.USD != slowCost.TreeCost.USD {
		t.Fatalf("costs: task %+v, parent %+v", slowCost, parentCost)
	}
	run("see what it cost",
		detailShows("#detail-cost", "cost "+cost.Dollars(slowCost.Cost.USD)),
		detailShows("#detail-tree-cost", "with its tasks "+cost.Dollars(slowCost.TreeCost.USD)),
		chromedp.Click(fmt.Sprintf(`#tree .node[data-id=%q]`, parent.ID)),
		detailShows("#detail-cost", "cost $0.00"),
		detailShows("#detail-tree-cost", "with its tasks "+cost.Dollars(parentCost.TreeCost.USD)),
		shot("03-cost"),
		chromedp.Click(fmt.Sprintf(`li.task[data-id=%q]`, slow.ID)),
	)

	run("resume from the page",
		chromedp.WaitVisible(`#resume-text`),
		chromedp.SendKeys(`#resume-text`, "quick: one more thing"),
		chromedp.Click(`#resume-send`),
		transcriptHas("answer: one more thing"),
		chromedp.WaitVisible(fmt.Sprintf(`li.task[data-id=%q][data-status="completed"]`, slow.ID)),
		shot("04-resumed"),
	)

	// A task launched elsewhere appears live, and is cancelled from the page.
	stuck := h.launch(parent.ID, "Stuck task", "gate: "+string(h.gate("never")))
	row := fmt.Sprintf(`li.task[data-id=%q]`, stuck.ID)
	run("cancel from the page",
		chromedp.WaitVisible(row+`[data-status="running"]`),
		chromedp.Click(row+` button.cancel`),
		chromedp.WaitVisible(row+`[data-status="cancelled"]`),
		chromedp.WaitVisible(`#count-cancelled[data-count="1"]`),
		chromedp.Click(row),
		transcriptHas("gate: "),
		shot("05-cancelled"),
	)
	var got sa.Task
	h.ok(http.StatusOK, "GET", "/v1/tasks/"+stuck.ID, nil, &got)
	if got.Status != sa.TaskCancelled {
		t.Fatalf("the task cancelled from the page is %s", got.Status)
	}

	// A forked task, of another agent, launched elsewhere.
	var forked sa.Task
	h.ok(http.StatusCreated, "POST", "/v1/tasks", map[string]any{"session_id": parent.ID, "agent": "explore",
		"description": "Forked task", "prompt": "quick: forked", "fork": true}, &forked)
	h.waitTask(forked.ID)

	// The rows the list shows, as ids in order, once they are exactly want.
	listShows := func(want ...string) chromedp.Action[chromedp.Void] {
		slices.Sort(want)
		return chromedp.Poll[chromedp.Void](fmt.Sprintf(`[...document.querySelectorAll('#task-list li.task')].map(li => li.dataset.id).sort().join(' ') === %q`,
			strings.Join(want, " ")), chromedp.WithPollingTimeout(time.Minute))
	}
	// choose picks an option of a select as a person does, once the page
	// offers it, and tells the page it changed.
	choose := func(sel, value string) chromedp.Action[chromedp.Void] {
		option := chromedp.Poll[chromedp.Void](fmt.Sprintf(`[...document.querySelector(%q).options].some(o => o.value === %q)`, sel, value),
			chromedp.WithPollingTimeout(time.Minute))
		pick := chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
			expr := fmt.Sprintf(`(() => { const s = document.querySelector(%q); s.value = %q; s.dispatchEvent(new Event('change')); return s.value; })()`, sel, value)
			got, err := chromedp.Evaluate[string](expr)(ctx, tg)
			if err == nil && got != value {
				err = fmt.Errorf("%s shows %q after choosing %q", sel, got, value)
			}
			return err
		})
		return func(ctx context.Context, tg *chromedp.Target) (chromedp.Void, error) {
			return chromedp.Void{}, chromedp.Do(ctx, option, pick)
		}
	}
	all := []string{slow.ID, stuck.ID, forked.ID}
	run("all tasks listed", listShows(all...))
	filters := []struct {
		filter, value string
		want          []string
	}{
		{"status", "cancelled", []string{stuck.ID}},
		{"status", "completed", []string{slow.ID, forked.ID}},
		{"status", "", all},
		{"agent", "explore", []string{forked.ID}},
		{"agent", "general", []string{slow.ID, stuck.ID}},
		{"agent", "", all},
	}
	for _, f := range filters {
		shown := cmp.Or(f.value, "all")
		run("filter "+f.filter+"="+shown, choose("#filter-"+f.filter, f.value), listShows(f.want...), shot("06-filter-"+f.filter+"-"+shown))
	}

	// The tree marks the resumed task and the forked one, and only them.
	treeMarks := func(id, want string) chromedp.Action[chromedp.Void] {
		return chromedp.Poll[chromedp.Void](fmt.Sprintf(`document.querySelector('#tree .node[data-id=%q] .marks')?.textContent === %q`, id, want),
			chromedp.WithPollingTimeout(time.Minute))
	}
	run("marks in the tree",
		treeMarks(slow.ID, "(resumed)"),
		treeMarks(forked.ID, "(forked)"),
		treeMarks(stuck.ID, ""),
		shot("07-tree-marks"),
	)
	tree := eval(fmt.Sprintf(`document.querySelectorAll('#tree .node[data-id=%q] ~ ul .node').length`, parent.ID))
	if tree != float64(3) {
		t.Errorf("the agent tree shows %v children under the parent, want 3", tree)
	}

	// A resume cancelled from the page leaves the answer before it, and
	// the task can be resumed again.
	run("cancel a resume, then resume again",
		chromedp.Click(fmt.Sprintf(`li.task[data-id=%q]`, slow.ID)),
		chromedp.WaitVisible(`#resume-text`),
		chromedp.SendKeys(`#resume-text`, "gate: "+string(h.gate("never-again"))),
		chromedp.Click(`#resume-send`),
		chromedp.WaitVisible(`#detail-status.status-resumed`),
		chromedp.Click(`#detail-cancel`),
		chromedp.WaitVisible(`#detail-status.status-cancelled`),
		chromedp.WaitVisible(`#resume-text`),
		shot("08-resume-cancelled"),
	)
	h.ok(http.StatusOK, "GET", "/v1/tasks/"+slow.ID, nil, &got)
	if got.Status != sa.TaskCancelled || got.Result != "answer: one more thing" {
		t.Errorf("the task whose resume was cancelled = %s with result %q, want cancelled with the answer before", got.Status, got.Result)
	}
	// A model without a price is not free: the page says so.
	var local sa.Session
	h.ok(http.StatusCreated, "POST", "/v1/sessions", map[string]any{"model": "offline", "title": "local model"}, &local)
	h.ok(http.StatusOK, "POST", "/v1/sessions/"+local.ID+"/messages?wait=true", map[string]any{"text": "What is 2+2?"}, nil)
	run("an unpriced model",
		chromedp.Click(fmt.Sprintf(`#tree .node[data-id=%q]`, local.ID)),
		detailShows("#detail-cost", "cost unpriced"),
		detailShows("#detail-tree-cost", "with its tasks unpriced"),
		shot("09-unpriced"),
	)

	b.close()
}
