// superagents for OpenCode: wakes a session when its background tasks end.
//
// Installed by `superagents install opencode`, which also adds superagents'
// MCP server (mcp.superagents in opencode.json). MCP gives a server no way
// to start a turn in OpenCode, so this plugin does: it runs `superagents
// notices --follow` with the MCP entry's command and environment, which
// follows the tasks of this host's conversations in superagents' store, and
// when a batch of a session's tasks has ended it prompts that session once
// with the notice, as soon as the session is idle. A notice is taken with
// the same once-per-conversation position as the MCP tool answers, so the
// model reads it once: from the wake, from the next tool answer, or, for a
// task that ended while OpenCode was not running, with the next message
// sent to the session. Typed against @opencode-ai/plugin 1.18.33; only
// types are imported, so it needs no package installed.
import type { Hooks, Plugin, PluginInput } from "@opencode-ai/plugin"
import { spawn, type ChildProcess } from "node:child_process"
import { createInterface } from "node:readline"

type Line = {
  type: "ready" | "launched" | "ended" | "due" | "notices" | "error"
  id?: number
  session?: string
  task?: string
  description?: string
  status?: string
  text: string
  error?: string
}

type McpEntry = { type?: string; command?: string[]; environment?: Record<string, string>; enabled?: boolean }

// The global flags of the MCP entry's command that say which store it uses.
const storeFlags = ["--data-dir", "--database", "--workspace"]

export const SuperagentsPlugin: Plugin = async (input: PluginInput): Promise<Hooks> => {
  const { client, directory } = input
  const busy = new Set<string>() // sessions whose turn runs
  const pending = new Set<string>() // sessions due while busy
  const unsent = new Map<string, string>() // notices a prompt could not deliver
  const ours = new Map<string, boolean>() // sessions of this OpenCode and directory
  const waiting = new Map<number, (text: string) => void>()
  let follower: ChildProcess | undefined
  let nextID = 1
  let started = false

  const log = (level: "info" | "warn", message: string) =>
    client.app.log({ body: { service: "superagents", level, message } }).catch(() => {})

  const start = (entry: McpEntry | undefined) => {
    if (started || !entry?.command?.length || entry.type === "remote" || entry.enabled === false) return
    started = true
    const [bin, ...rest] = entry.command
    const args: string[] = []
    rest.forEach((a, i) => {
      if (storeFlags.includes(a) && i + 1 < rest.length) args.push(a, rest[i + 1])
      else if (storeFlags.some((f) => a.startsWith(f + "="))) args.push(a)
    })
    args.push("notices", "--host", "opencode", "--follow")
    const child = spawn(bin, args, {
      cwd: directory,
      env: { ...process.env, ...(entry.environment ?? {}) },
      stdio: ["pipe", "pipe", "pipe"],
    })
    follower = child
    child.on("error", (err) => log("warn", `superagents notices did not start: ${err.message}`))
    child.on("exit", (code) => {
      follower = undefined
      for (const resolve of waiting.values()) resolve("")
      waiting.clear()
      log("warn", `superagents notices exited (${code}): tasks will not wake their sessions`)
    })
    child.stderr?.on("data", (b: Buffer) => log("warn", b.toString().trim()))
    createInterface({ input: child.stdout! }).on("line", (raw) => {
      let line: Line
      try {
        line = JSON.parse(raw)
      } catch {
        return
      }
      void handle(line)
    })
  }

  // take asks the follower for a session's notices, marking them given.
  const take = (session: string): Promise<string> =>
    new Promise((resolve) => {
      if (!follower?.stdin?.writable) return resolve("")
      const id = nextID++
      waiting.set(id, resolve)
      follower.stdin.write(JSON.stringify({ take: session, id }) + "\n")
    })

  // isOurs: the follower serves every OpenCode conversation of the store;
  // this OpenCode acts for the sessions it has and that are of its directory.
  const isOurs = async (session: string): Promise<boolean> => {
    const known = ours.get(session)
    if (known !== undefined) return known
    const got = await client.session.get({ path: { id: session } }).catch(() => undefined)
    const mine = got?.data?.directory === directory
    ours.set(session, mine)
    return mine
  }

  const wake = async (session: string) => {
    const text = (unsent.get(session) ?? "") + (await take(session))
    unsent.delete(session)
    if (!text) return // a tool answer of the turn carried them already
    busy.add(session)
    client.session
      .prompt({ path: { id: session }, body: { parts: [{ type: "text", text }] } })
      .then((r) => {
        if (r.error) throw new Error(JSON.stringify(r.error))
      })
      .catch((err: unknown) => {
        unsent.set(session, text + "\n\n") // told at its next idle
        log("warn", `superagents could not prompt session ${session}: ${err}`)
      })
  }

  const toast = (message: string, variant: "info" | "success" | "warning" | "error") =>
    client.tui.showToast({ body: { title: "superagents", message, variant } }).catch(() => {})

  const handle = async (line: Line) => {
    if (line.type === "notices" || line.type === "error") {
      const resolve = line.id ? waiting.get(line.id) : undefined
      if (resolve) {
        waiting.delete(line.id!)
        resolve(line.text ?? "")
      }
      if (line.error) log("warn", line.error)
      return
    }
    if (!line.session || !(await isOurs(line.session))) return
    if (line.type === "launched") toast(`Task launched: ${line.description}`, "info")
    if (line.type === "ended") {
      const ok = line.status === "completed"
      toast(`Task ${line.status}: ${line.description}`, ok ? "success" : line.status === "cancelled" ? "warning" : "error")
    }
    if (line.type === "due") {
      if (busy.has(line.session)) pending.add(line.session)
      else await wake(line.session)
    }
  }

  const idle = async (session: string) => {
    busy.delete(session)
    if (pending.delete(session) || unsent.has(session)) await wake(session)
  }

  return {
    config: async (config) => start((config.mcp as Record<string, McpEntry> | undefined)?.superagents),
    event: async ({ event }) => {
      // Never awaited here: OpenCode answers its client only once every
      // plugin has loaded, and events come while they load.
      if (!started)
        void client.config
          .get()
          .then((r) => start(r.data?.mcp?.superagents as McpEntry | undefined))
          .catch(() => {})
      if (event.type === "session.status") {
        const { sessionID, status } = event.properties
        if (status.type === "idle") await idle(sessionID)
        else busy.add(sessionID)
      } else if (event.type === "session.idle") {
        await idle(event.properties.sessionID)
      }
    },
    // A message sent to a session carries the notices it was not given
    // (tasks that ended while OpenCode was not running, or while the
    // session had no turn to wake), so its model reads them this turn.
    "chat.message": async (inp, output) => {
      busy.add(inp.sessionID)
      const text = (unsent.get(inp.sessionID) ?? "") + (await take(inp.sessionID))
      unsent.delete(inp.sessionID)
      if (!text) return
      output.parts.push({
        id: partID(),
        sessionID: inp.sessionID,
        messageID: output.message.id,
        type: "text",
        text,
        synthetic: true,
      })
    },
  }
}

// partID makes an id as OpenCode's own parts have ("prt_", an ascending
// time, random letters), so the notice sorts after the message's text.
let partCounter = 0
function partID(): string {
  const now = BigInt(Date.now()) * 0x1000n + BigInt(++partCounter & 0xfff)
  const time = now.toString(16).padStart(12, "0").slice(-12)
  const letters = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz"
  let rand = ""
  for (let i = 0; i < 14; i++) rand += letters[Math.floor(Math.random() * letters.length)]
  return `prt_${time}${rand}`
}
