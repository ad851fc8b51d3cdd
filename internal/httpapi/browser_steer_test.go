package httpapi_test

import (
	"bytes"
	"fmt"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"

	sa "github.com/superagents/superagents"
)

// TestDashboardSteersTasks drives the dashboard in headless Chromium: it
// sends a message to a running task from the task's message box, sees it
// wait, then be delivered, and the task's next model request carry it;
// then it answers one task's question with a choice button and another's
// with the answer field, the task list marking them while they wait.
func TestDashboardSteersTasks(t *testing.T) {
	chromium := needChromium(t)
	h := newHarness(t)
	parent := h.session()
	b := openBrowser(t, chromium, "dashboard-steering")
	b.connect(h)

	gate := h.gate("steer-browser-gate")
	running := h.launch(parent.ID, "Steered from the page", "gate: "+string(gate))
	t.Cleanup(func() { gate.open(t) })
	h.toolStarted(running.ID)
	row := fmt.Sprintf(`li.task[data-id=%q]`, running.ID)
	const text = "Paint it blue, please"
	b.run("send a message to the running task",
		chromedp.Click(row),
		chromedp.WaitVisible(`#steer-text`),
		chromedp.SendKeys(`#steer-text`, text),
		chromedp.Click(`#steer-send`),
		chromedp.WaitVisible(`#inbox .inbox-item.sent[data-state="waiting"]`),
		b.poll(fmt.Sprintf(`document.querySelector('#inbox .inbox-item.sent .text').textContent === %q`, text)),
		b.poll(`document.querySelector('#steer-text').value === ''`),
		b.shot("02-message-waiting"),
	)
	if in := h.inbox(running.ID); len(in.Messages) != 1 || in.Messages[0].Text != text || in.Messages[0].From != "the user" || !in.Messages[0].Pending() {
		t.Fatalf("the store after sending from the page: %+v", in.Messages)
	}
	gate.open(t)
	b.run("see it delivered and read",
		chromedp.WaitVisible(`#inbox .inbox-item.sent[data-state="delivered"]`),
		b.transcriptHas("[Message from the user"),
		b.transcriptHas("steered: "+text),
		chromedp.WaitVisible(row+`[data-status="completed"]`),
		b.poll(`document.querySelector('#steer-form').hidden`), // nothing is sent to an ended task
		b.shot("03-message-delivered"),
	)
	if body := h.carried(text); !bytes.Contains(body, []byte("tool_result")) {
		t.Errorf("the message was not carried by the request after the tool's result: %s", body)
	}
	if got := h.waitTask(running.ID); got.Result != "steered: "+text {
		t.Fatalf("the steered task ended %s with %q", got.Status, got.Result)
	}

	choice := h.launch(parent.ID, "Asks for a colour", "ask: Which colour? | red, blue")
	row = fmt.Sprintf(`li.task[data-id=%q]`, choice.ID)
	b.run("answer with a choice",
		chromedp.WaitVisible(row+` .asks`),
		chromedp.Click(row),
		chromedp.WaitVisible(`#question`),
		b.poll(`document.querySelector('#question-text').textContent === 'Which colour?'`),
		chromedp.WaitVisible(`#question-choices button.choice[data-choice="red"]`),
		b.poll(`document.querySelector('#steer-form').hidden && document.querySelector('#answer-form').hidden`),
		b.poll(`document.querySelectorAll('#inbox .inbox-item').length === 0`), // the question is in its box
		b.shot("04-question-choices"),
		chromedp.Click(`#question-choices button.choice[data-choice="blue"]`),
		chromedp.WaitVisible(row+`[data-status="completed"]`),
		b.transcriptHas("passed The user answered: blue"),
		chromedp.WaitVisible(`#inbox .inbox-item.asked[data-outcome="answered"] .answer`),
		b.poll(`document.querySelector('#inbox .inbox-item.asked .answer').textContent === 'answer: blue'`),
		b.poll(fmt.Sprintf(`!document.querySelector('%s .asks')`, row)),
		b.shot("05-question-answered"),
	)

	free := h.launch(parent.ID, "Asks for a name", "ask: What name?")
	row = fmt.Sprintf(`li.task[data-id=%q]`, free.ID)
	b.run("answer in the field",
		chromedp.Click(row),
		chromedp.WaitVisible(`#answer-text`),
		b.poll(`document.querySelector('#question-text').textContent === 'What name?' && document.querySelectorAll('#question-choices button').length === 0`),
		chromedp.SendKeys(`#answer-text`, "Ada"),
		b.shot("06-question-free"),
		chromedp.Click(`#answer-send`),
		chromedp.WaitVisible(row+`[data-status="completed"]`),
		b.transcriptHas("passed The user answered: Ada"),
		b.shot("07-question-free-answered"),
	)
	if got := h.waitTask(free.ID); got.Status != sa.TaskCompleted || got.Result != "passed The user answered: Ada" {
		t.Fatalf("the task answered in the field ended %s with %q", got.Status, got.Result)
	}
	// Nothing the page shows is a missing value.
	if shown := b.eval(`document.body.innerText`).(string); strings.Contains(shown, "undefined") || strings.Contains(shown, "null") {
		t.Errorf("the page shows a missing value:\n%s", shown)
	}
	b.close()
}
