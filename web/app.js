// The phone page: the same JSON-RPC as the jukebox command, over POST /rpc, kept current by
// GET /events. No framework and no build step.
"use strict";

const $ = (id) => document.getElementById(id);
let nextID = 1;
let refreshTimer = null;
let events = null;
let retryDelay = 1000;
// What each list shows now: a list is drawn again only when it changed, so a button is not
// replaced under a finger about to tap it.
const drawn = {};
// Whether the session has a cue: each clip's menu then also offers to play with it.
let hasCue = false;
// The clips as last listed, by id, for the menu.
let clipsByID = new Map();

function draw(id, data, render) {
  const key = JSON.stringify(data);
  if (drawn[id] === key) return;
  drawn[id] = key;
  $(id).replaceChildren(...render());
}

class Unauthorized extends Error {}

// A request that was refused: the server's stable reason, its message (the details), and data.
class Failure extends Error {
  constructor(reason, message, data) {
    super(message);
    this.reason = reason;
    this.data = data || {};
  }

  // From an answer's body (its error object, if it has one) and HTTP status.
  static answered(body, status) {
    const error = (body && body.error) || {};
    return new Failure((error.data && error.data.reason) || `http-${status}`, error.message || `HTTP status ${status}`, error.data);
  }

  // Whatever was thrown, as a Failure.
  static of(error) {
    return error instanceof Failure ? error : new Failure("", String(error.message || error));
  }
}

async function rpc(method, params) {
  let response;
  try {
    response = await fetch("/rpc", {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      credentials: "same-origin",
      body: JSON.stringify({ jsonrpc: "2.0", id: nextID++, method, params }),
    });
  } catch {
    throw new Failure("unreachable", "the request did not reach jukeboxd");
  }
  if (response.status === 401) throw new Unauthorized();
  const answer = await response.json().catch(() => null);
  if (!answer || answer.error) throw Failure.answered(answer, response.status);
  return answer.result;
}

// Each reason the server gives, as a sentence; the server's own message stays behind "Details".
const SENTENCES = {
  "unknown-clip": "That clip is no longer in the session.",
  "queue-full": "The queue is full. Let it play, or clear it first.",
  "outside-clips-directory": "That file is outside the clips folder, so jukeboxd will not play it.",
  "unplayable-clip": "That clip's file is missing, or is not sound jukeboxd can play.",
  "session-invalid": "That would make the session invalid, so nothing was changed.",
  "state-not-saved": "Done, but the Pi could not save it (is its disk full?), so it will be lost at a restart.",
  "session-changed-on-disk": "The session file was changed on the Pi. Run “jukebox reload” there, then try again.",
  "revision-mismatch": "Someone else changed the session just now. Nothing was saved: look again, and retry.",
  "session-not-saved": "The Pi could not save the session file (is its disk full?). Nothing was changed.",
  "upload-too-large": "That file is larger than this jukebox accepts.",
  "upload-failed": "The file did not arrive whole. Nothing was kept; try again.",
  "invalid-params": "jukeboxd cannot take that value.",
  "unreachable": "jukeboxd cannot be reached. Is the Pi on, and on this network?",
  "http-403": "jukeboxd refused this page. Open it by the jukebox's own address.",
  "http-413": "That is too large for jukeboxd.",
  "http-429": "Too many tries. Wait a moment, then try again.",
  "http-503": "jukeboxd is busy. Try again in a moment.",
};

// What went wrong, in a sentence: what the server gave as a problem with a field (without the
// file, line and field path, which read like a compiler), or the sentence for its reason.
function sentence(error, overrides) {
  if (overrides && overrides[error.reason]) return overrides[error.reason];
  const problems = error.data && error.data.problems;
  if (error.reason === "session-invalid" && problems && problems.length) {
    const plain = problems[0].replace(/^.*?:\d+(:\d+)?: /, "").replace(/^[\w.[\]]+: /, "");
    return `Not saved: ${plain}`;
  }
  return SENTENCES[error.reason] || "That did not work.";
}

function details(text) {
  const box = document.createElement("details");
  const summary = document.createElement("summary");
  summary.textContent = "Details";
  const body = document.createElement("span");
  body.textContent = ` ${text}`;
  box.append(summary, body);
  return box;
}

// A problem, shown where the action was: a status line beside the control that caused it.
function problem(where, error, overrides) {
  if (error instanceof Unauthorized) return showLogin();
  error = Failure.of(error);
  const line = $(where);
  line.className = "status problem";
  line.replaceChildren(document.createTextNode(sentence(error, overrides) + " "), details(error.message));
}

function done(where, text) {
  const line = $(where);
  line.className = "status";
  line.textContent = text;
}

// A short note above the bar; it goes by itself. Problems stay longer, with their details.
// One at a time, in one place: a newer note takes the older one's place, so nothing moves.
function toast(text, error) {
  const note = document.createElement("div");
  note.className = error ? "toast problem" : "toast";
  note.textContent = text;
  if (error) note.append(" ", details(error.message));
  $("toasts").replaceChildren(note);
  setTimeout(() => note.remove(), error ? 8000 : 3000);
}

// For the controls in the bar and the lists: the problem as a toast, just above the bar.
function complain(error, overrides) {
  if (error instanceof Unauthorized) return showLogin();
  error = Failure.of(error);
  toast(sentence(error, overrides), error);
}

function clock(seconds) {
  const s = Math.floor(seconds || 0);
  if (s >= 3600) return `${Math.floor(s / 3600)}:${String(Math.floor(s / 60) % 60).padStart(2, "0")}:${String(s % 60).padStart(2, "0")}`;
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function element(tag, className, text) {
  const made = document.createElement(tag);
  if (className) made.className = className;
  if (text !== undefined) made.textContent = text;
  return made;
}

function button(label, name, action) {
  const made = element("button", "", label);
  made.type = "button";
  made.setAttribute("aria-label", name);
  made.addEventListener("click", () => action().catch(complain));
  return made;
}

function item(text, ...controls) {
  const li = element("li");
  li.append(element("span", "", text), ...controls);
  return li;
}

// MARK: - The bar: what plays, ticking between events

// The last known place in the clip, and when it was known: the bar moves on from it locally.
let playing = null;
let uptime = null;

function tick() {
  const now = performance.now();
  if (playing) {
    const elapsed = Math.min(playing.total || Infinity, playing.elapsed + (playing.paused ? 0 : (now - playing.at) / 1000));
    $("elapsed").textContent = clock(elapsed);
    $("progress").value = playing.total ? elapsed / playing.total : 0;
  }
  if (uptime) $("device").textContent = `${uptime.text} · jukeboxd up ${clock(uptime.seconds + (now - uptime.at) / 1000)}`;
}
setInterval(tick, 250);

function showPlaying(queue, status) {
  const now = performance.now();
  const current = queue.playing;
  if (current) {
    const paused = Boolean(current.paused || status.paused);
    let elapsed = current.elapsed || 0;
    // The same clip playing on: an answer a moment behind what the bar shows does not move
    // it back (a second or more behind is a correction, and is taken).
    if (playing && playing.ticket === current.entry.ticket && !playing.paused && !paused) {
      const shown = Math.min(playing.total || Infinity, playing.elapsed + (now - playing.at) / 1000);
      if (elapsed < shown && shown - elapsed < 1) elapsed = shown;
    }
    playing = { ticket: current.entry.ticket, elapsed, total: current.total || 0, paused, at: now };
    $("now").textContent = (playing.paused ? "Paused: " : "") + current.entry.title;
    $("total").textContent = clock(current.total);
  } else {
    playing = null;
    $("now").textContent = queue.waitingForDevice ? `${queue.waitingForDevice.title} is waiting for the audio device`
      : status.paused ? "Paused. Nothing is playing." : "Nothing is playing.";
    $("elapsed").textContent = clock(0);
    $("total").textContent = clock(0);
    $("progress").value = 0;
  }
  // One button that says what a tap will do; it keeps its place and its width.
  $("pause").textContent = status.paused ? "Resume" : "Pause";
  $("pause").dataset.paused = String(status.paused);
  // What the device is doing, in words: never "playing" while nothing plays or while paused.
  const device = status.deviceState.startsWith("retrying") ? `Speaker unplugged? ${status.device} cannot be opened; trying again`
    : current && !playing.paused ? `Playing through ${status.device}` : `Speaker: ${status.device}`;
  uptime = { text: device, seconds: status.uptime, at: now };
  tick();
}

// MARK: - The lists

async function refresh() {
  const [status, queue, clips, history, next] = await Promise.all([
    rpc("status"), rpc("queue"), rpc("clips"), rpc("history", { limit: 10 }), rpc("next", { limit: 5 })]);
  $("banner").hidden = true;
  showPlaying(queue, status);
  showQuiet(status.quiet);
  showBed(status.bed);
  showToday(status);
  showAlert(status);
  $("about").textContent = `jukeboxd ${status.version || ""}, playing “${status.session}”`;
  // Not while the slider is being moved: its value is the one on its way.
  if (document.activeElement !== $("volume") && wantedVolume === null) $("volume").value = $("volume-value").value = status.volume;

  const held = queue.held || [];
  draw("queue", [queue.waiting, held], () => {
    const entries = queue.waiting.concat(held);
    if (entries.length === 0) return [item("Nothing is waiting.")];
    return entries.map((entry) =>
      item(`${entry.title} (${queuedBy(entry.origin)}${entry.afterQuiet ? ", after quiet" : ""}${urgency(entry)})`,
        button("Remove", `Remove ${entry.title}`, async () => { await rpc("remove", { tickets: [entry.ticket] }); toast(`Removed ${entry.title}.`); })));
  });
  $("clear").disabled = queue.waiting.length + held.length === 0;

  clipsByID = new Map(clips.clips.map((clip) => [clip.id, clip]));
  draw("clips", [hasCue, clips.clips], () => clips.clips.map(card));

  draw("next", next, () => upcoming(next).map((line) => item(line)));

  draw("history", history.plays, () => history.plays.length === 0 ? [item("Nothing has played yet.")] : history.plays.map((play) =>
    item(`${new Date(play.startedAt * 1000).toLocaleTimeString([], { ...HOURS, second: "2-digit" })} ${play.entry.title}: ${play.outcome}${play.reason ? ` (${play.reason})` : ""}`)));
}

// Times as the CLI gives them, on a 24-hour clock, whatever the browser's language.
const HOURS = { hour: "2-digit", minute: "2-digit", hourCycle: "h23" };

// Who queued an entry, in the words the CLI's queue uses.
const origins = { scheduler: "picked at random", "fixed-time": "at its time", web: "from this page", mqtt: "over MQTT", siren: "by Home Assistant's siren", test: "sound test" };
function queuedBy(origin) { return origins[origin] || `by ${origin}`; }

// What an entry's place in the queue owes to an urgent clip: asked for now, or cut by one.
function urgency(entry) {
  if (entry.now) return ", now";
  if (entry.resumeAt === undefined || entry.resumeAt === null) return "";
  return entry.resumeAt > 0 ? `, cut: goes on from ${clock(entry.resumeAt)}` : ", cut: plays again from its start";
}

function describe(clip) {
  const parts = [clip.duration ? clock(clip.duration) : "", !clip.enabled ? "disabled" : clip.windowOpen ? "" : "not picked at this hour", `played ${clip.timesPlayed}×`];
  return parts.filter(Boolean).join(" · ");
}

// A clip: a tap plays it; its menu holds the rest. Its size never changes with what it says.
function card(clip) {
  const li = element("li", clip.enabled ? "card" : "card disabled");
  li.dataset.clip = clip.id;
  const play = element("button", "play");
  play.type = "button";
  play.setAttribute("aria-label", `Play ${clip.title}`);
  const meta = element("span", clip.problem ? "meta problem" : "meta", clip.problem || describe(clip));
  play.append(element("span", "title", clip.title), meta);
  play.addEventListener("click", async () => {
    try {
      await rpc("enqueue", { clips: [clip.id] });
      toast(`Queued ${clip.title}.`);
    } catch (error) {
      cardProblem(clip, error);
    }
  });
  const more = element("button", "more", "⋯");
  more.type = "button";
  more.setAttribute("aria-label", `More for ${clip.title}`);
  more.setAttribute("aria-haspopup", "dialog");
  more.addEventListener("click", () => openMenu(clip.id));
  li.append(play, more);
  return li;
}

// A clip's problem in its own card (in place of its details, so the card keeps its size), and
// in a toast with the details; the card says what it did again after a while.
function cardProblem(clip, error) {
  if (error instanceof Unauthorized) return showLogin();
  const meta = document.querySelector(`#clips li[data-clip="${CSS.escape(clip.id)}"] .meta`);
  const text = sentence(error);
  if (meta) {
    meta.textContent = text;
    meta.className = "meta problem";
    setTimeout(() => { delete drawn.clips; refreshSoon(); }, 8000);
  }
  toast(`${clip.title}: ${text}`, error);
}

function openMenu(id) {
  const clip = clipsByID.get(id);
  if (!clip) return;
  $("menu-title").textContent = clip.title;
  const close = () => $("menu").close();
  const actions = [button("Play", `Play ${clip.title} at the end of the queue`, async () => {
    close();
    await rpc("enqueue", { clips: [clip.id] }).then(() => toast(`Queued ${clip.title}.`), (error) => cardProblem(clip, error));
  })];
  actions.push(button("Play now", `Play ${clip.title} now, cutting in`, async () => {
    close();
    await rpc("enqueue", { clips: [clip.id], now: true }).then(() => toast(`Playing ${clip.title} now.`), (error) => cardProblem(clip, error));
  }));
  if (hasCue) actions.push(button("Play with the cue", `Play ${clip.title} with the cue`, async () => {
    close();
    await rpc("enqueue", { clips: [clip.id], cue: true }).then(() => toast(`Queued ${clip.title}, with the cue.`), (error) => cardProblem(clip, error));
  }));
  actions.push(button("Edit…", `Edit ${clip.title}`, async () => { close(); await edit(clip.id); }));
  actions.push(button(clip.enabled ? "Disable" : "Enable", `${clip.enabled ? "Disable" : "Enable"} ${clip.title}`, async () => {
    close();
    await rpc("updateClip", { id: clip.id, enabled: !clip.enabled }).then(
      () => toast(`${clip.title} ${clip.enabled ? "will not be picked" : "can be picked again"}.`), (error) => cardProblem(clip, error));
  }));
  const remove = button("Remove…", `Remove ${clip.title} from the session`, async () => {
    close();
    const answer = await ask(`Remove ${clip.title}?`, `${clip.title} leaves the session. What is queued still plays.`, "Remove", "Also delete its file");
    if (!answer) return;
    const session = await rpc("session");
    await rpc("removeClip", { id: clip.id, deleteFile: answer.checked, ifRevision: session.revision }).then(
      () => toast(`Removed ${clip.title}.`), (error) => cardProblem(clip, error));
  });
  remove.classList.add("danger");
  actions.push(remove);
  $("menu-actions").replaceChildren(...actions);
  $("menu").showModal();
}
$("menu-close").addEventListener("click", () => $("menu").close());

// A question in a dialog (not the browser's own, which stops the page); resolves to null for
// no, or to { checked } for yes.
function ask(title, text, yes, option) {
  $("confirm-title").textContent = title;
  $("confirm-text").textContent = text;
  $("confirm-yes").textContent = yes;
  $("confirm-option").hidden = !option;
  $("confirm-check-label").textContent = option || "";
  $("confirm-check").checked = false;
  $("confirm").returnValue = "";
  $("confirm").showModal();
  return new Promise((resolve) => {
    $("confirm").addEventListener("close", () => resolve($("confirm").returnValue === "yes" ? { checked: $("confirm-check").checked } : null), { once: true });
  });
}

// What will happen, in lines: fixed times, the next pick, quiet hours, today's sun.
function upcoming(next) {
  const when = (t) => new Date(t * 1000).toLocaleString([], { weekday: "short", ...HOURS });
  const lines = next.fixedTimes.map((play) => `${when(play.at)} ${play.title}${play.plan ? ` (plan ${play.plan})` : ""}${play.quiet ? " (skipped: quiet)" : ""}`);
  if (next.nextPick && !next.pickSkipped) lines.push(`Next random pick ${when(next.nextPick)}`);
  if (next.quietHours) lines.push(`Quiet hours ${when(next.quietHours.from)}${next.quietHours.to ? ` to ${when(next.quietHours.to)}` : ""}`);
  if (next.sun) lines.push(`Sun today: ${next.sun.map((s) => `${s.event} ${s.time}`).join(", ")}`);
  if (lines.length === 0) lines.push("Nothing planned.");
  return lines;
}

// Today's day plan, when the session has plans: which, why, and how the calendars were last
// read. The plan of today or tomorrow can be changed by hand, after a question; "As planned"
// goes back to what the calendars and the rules say.
const AS_PLANNED = "";
function showToday(status) {
  $("today-box").hidden = !status.plan;
  if (!status.plan) return;
  const plan = status.plan;
  const times = plan.times.map((time) => time.at).join(", ");
  let text = `${plan.plan || "No plan"} (${plan.why})${times ? `: ${times}` : ""}.`;
  const failing = (status.calendars || []).filter((calendar) => calendar.problem);
  if (failing.length) text += ` Calendar ${failing.map((calendar) => calendar.name).join(", ")} could not be read; its last good copy is used.`;
  $("today-state").textContent = text;
  const names = status.plans || [];
  draw("plan-choice", names, () => [AS_PLANNED, ...names].map((name) => {
    const option = element("option", "", name === AS_PLANNED ? "As planned" : name);
    option.value = name;
    return option;
  }));
}

// Alerts: each started, and ended, after a question. One that is on takes the title's place
// at the top, on every view, with a button to end it.
function showAlert(status) {
  const names = status.alerts || [];
  $("alerts-box").hidden = names.length === 0;
  draw("alert-name", names, () => names.map((name) => {
    const option = element("option", "", name);
    option.value = name;
    return option;
  }));
  const on = status.alert;
  $("title").hidden = Boolean(on);
  $("alert-on").hidden = !on;
  if (on) $("alert-text").textContent = `Alert: ${on.name}`;
}

// Quiet: nothing jukeboxd starts by itself plays. The button turns it on or off by hand.
// The music bed, when the session has one.
function showBed(bed) {
  $("music-box").hidden = !bed;
  if (!bed) return;
  const state = bed.problem ? `Cannot read the music: ${bed.problem}` : bed.music === "playing" ? "Music coming in" : "No music coming in";
  $("music-state").textContent = (bed.on ? "" : "Music off. ") + state + (bed.on && bed.ducked ? ", lowered" : "");
  $("music").textContent = bed.on ? "Music off" : "Music on";
  $("music").setAttribute("aria-pressed", bed.on);
}

function showQuiet(quiet) {
  if (!quiet) return;
  const until = quiet.until ? new Date(quiet.until * 1000).toLocaleString([], { weekday: "short", ...HOURS }) : null;
  let text;
  if (quiet.quiet) text = (quiet.byHand ? "Quiet, set by hand" : "Quiet hours") + (until ? ` until ${until}` : quiet.byHand ? " until turned off" : "");
  else text = quiet.byHand ? `Quiet hours lifted until ${until}` : until ? `Not quiet; quiet hours begin ${until}` : "Not quiet.";
  if (quiet.held) text += ` (${quiet.held} waiting for it to end)`;
  $("quiet-state").textContent = text;
  $("quiet").textContent = quiet.quiet ? "End quiet" : "Be quiet";
  $("quiet-for").disabled = quiet.quiet;
  $("quiet").setAttribute("aria-pressed", String(quiet.quiet));
}

// MARK: - Windows: from, to (a clock time or the sun's), and days

const DAYS = ["mon", "tue", "wed", "thu", "fri", "sat", "sun"];
const SUN = ["sunrise", "sunset", "dawn", "dusk"];

// "07:55" → { kind: "time", time }; "sunset-1h30m" → { kind: "sunset", minutes: -90 }.
function readEnd(text) {
  const sun = /^(sunrise|sunset|dawn|dusk)(?:([+-])(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?)?$/.exec((text || "").trim().toLowerCase());
  if (sun) {
    const minutes = Number(sun[3] || 0) * 60 + Number(sun[4] || 0) + Math.round(Number(sun[5] || 0) / 60);
    return { kind: sun[1], minutes: sun[2] === "-" ? -minutes : minutes };
  }
  return { kind: "time", time: (text || "").trim() };
}

function writeEnd(end) {
  if (end.kind === "time") return end.time;
  const minutes = Math.round(end.minutes || 0);
  return minutes === 0 ? end.kind : `${end.kind}${minutes < 0 ? "-" : "+"}${Math.abs(minutes)}m`;
}

// One end of a window: what it is measured from, and the time or the offset in minutes, which
// share one place so that choosing the other does not move anything.
function endEditor(label, text) {
  const end = readEnd(text);
  const box = element("span", "end");
  const kind = element("select");
  kind.setAttribute("aria-label", `${label}: at`);
  for (const name of ["time", ...SUN]) {
    const option = element("option", "", name === "time" ? "time" : name);
    option.value = name;
    kind.append(option);
  }
  kind.value = end.kind;
  const time = element("input");
  time.type = "time";
  time.setAttribute("aria-label", label);
  time.value = end.kind === "time" ? end.time : "";
  const offset = element("input");
  offset.type = "number";
  offset.step = "5";
  offset.min = "-720";
  offset.max = "720";
  offset.setAttribute("aria-label", `${label}: minutes after (before, if negative)`);
  offset.value = end.kind === "time" ? "0" : String(end.minutes);
  const unit = element("span", "unit", "min");
  const show = () => { time.hidden = kind.value !== "time"; offset.hidden = unit.hidden = kind.value === "time"; };
  kind.addEventListener("change", show);
  show();
  box.append(kind, time, offset, unit);
  box.read = () => writeEnd(kind.value === "time" ? { kind: "time", time: time.value } : { kind: kind.value, minutes: Number(offset.value) });
  return box;
}

function windowRow(list, window, index) {
  const row = element("div", "window");
  const name = `${list.dataset.name} ${index + 1}`;
  const from = endEditor(`${name} from`, window.from);
  const to = endEditor(`${name} to`, window.to);
  const ends = element("div", "ends");
  const remove = button("✕", `Remove ${name.toLowerCase()}`, async () => { row.remove(); });
  ends.append(from, element("span", "", "to"), to, remove);
  const days = element("div", "days");
  const chosen = new Set(window.days || DAYS);
  for (const day of DAYS) {
    const chip = element("button", "", day[0].toUpperCase() + day.slice(1, 2));
    chip.type = "button";
    chip.setAttribute("aria-label", `${name} on ${day}`);
    chip.setAttribute("aria-pressed", String(chosen.has(day)));
    chip.dataset.day = day;
    chip.addEventListener("click", () => chip.setAttribute("aria-pressed", String(chip.getAttribute("aria-pressed") !== "true")));
    days.append(chip);
  }
  row.append(ends, days);
  // What the editor does not show (dates, except) is kept as it was.
  row.read = () => {
    const result = { ...window, from: from.read(), to: to.read() };
    const on = [...days.children].filter((chip) => chip.getAttribute("aria-pressed") === "true").map((chip) => chip.dataset.day);
    if (on.length === DAYS.length || on.length === 0) delete result.days; else result.days = on;
    return result;
  };
  return row;
}

function showWindows(id, windows) {
  const list = $(id);
  const rows = element("div", "rows");
  (windows || []).forEach((window, index) => rows.append(windowRow(list, window, index)));
  const add = button(list.dataset.add || "Add hours", `Add to ${list.dataset.name.toLowerCase()}`, async () => {
    rows.append(windowRow(list, { from: "09:00", to: "17:00" }, rows.children.length));
  });
  list.replaceChildren(rows, add);
  list.read = () => [...rows.children].map((row) => row.read());
}

// As the session holds them, for comparing with what was loaded.
function sameWindows(a, b) {
  return JSON.stringify(a || []) === JSON.stringify(b || []);
}

// MARK: - Editing a clip

// Fixed times: "07:55@mon-fri, *:00" (empty: none). Times kept as objects (with dates) stay.
function parseTimes(text) {
  return text.split(/,\s+/).map((part) => part.trim()).filter(Boolean);
}

function formatTimes(times) {
  return (times || []).map((t) => (typeof t === "string" ? t : t.time)).join(", ");
}

let editing = null;

async function edit(id) {
  const session = await rpc("session");
  const clip = session.document.clips.find((c) => (c.id || c.file.replace(/^.*\//, "").replace(/\.[^.]*$/, "")) === id) || {};
  editing = { id, revision: session.revision, clip };
  $("editor-title").textContent = `Edit ${clip.title || id}`;
  $("clip-title").value = clip.title || "";
  $("clip-weight").value = clip.weight || 1;
  $("clip-gain").value = clip.gain || 0;
  showWindows("clip-windows", clip.windows);
  $("clip-at").value = formatTimes(clip.at);
  done("clip-error", "");
  $("editor").showModal();
}

$("clip-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    // Only what changed, so the file keeps its defaults unwritten.
    const before = editing.clip;
    const change = { id: editing.id, ifRevision: editing.revision };
    if (($("clip-title").value || "") !== (before.title || "")) change.title = $("clip-title").value || null;
    if (Number($("clip-weight").value) !== (before.weight || 1)) change.weight = Number($("clip-weight").value);
    if (Number($("clip-gain").value) !== (before.gain || 0)) change.gain = Number($("clip-gain").value);
    const windows = $("clip-windows").read();
    if (!sameWindows(windows, before.windows)) change.windows = windows;
    if ($("clip-at").value.trim() !== formatTimes(before.at)) {
      const times = parseTimes($("clip-at").value);
      change.at = times.length ? times : null;
    }
    await rpc("updateClip", change);
    $("editor").close();
    toast(`Saved ${$("clip-title").value || editing.id}.`);
    refreshSoon();
  } catch (error) {
    problem("clip-error", error);
  }
});
$("clip-cancel").addEventListener("click", () => $("editor").close());

// MARK: - The schedule

// The schedule as loaded, so only what changed is sent.
let loadedSchedule = {};

async function loadSchedule() {
  const result = await rpc("session");
  const session = result.document;
  if (hasCue !== Boolean(result.resolved.cue)) {
    hasCue = Boolean(result.resolved.cue);
    refreshSoon();
  }
  const interval = session.interval || {};
  $("every-min").value = interval.min || "10m";
  $("every-max").value = interval.max || "30m";
  showWindows("active", session.activeHours);
  $("duration").value = session.duration || "";
  showWindows("quiet-hours", session.quiet);
  $("location").value = session.location ? `${session.location.latitude},${session.location.longitude}` : "";
  loadedSchedule = session;
}

$("schedule").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    const change = { interval: { min: $("every-min").value, max: $("every-max").value }, duration: $("duration").value || null };
    const active = $("active").read();
    if (!sameWindows(active, loadedSchedule.activeHours)) change.activeHours = active;
    const quiet = $("quiet-hours").read();
    if (!sameWindows(quiet, loadedSchedule.quiet)) change.quiet = quiet.length ? quiet : null;
    const place = $("location").value.replace(/\s/g, "");
    const loadedPlace = loadedSchedule.location ? `${loadedSchedule.location.latitude},${loadedSchedule.location.longitude}` : "";
    if (place !== loadedPlace) {
      const [latitude, longitude] = place.split(",").map(Number);
      change.location = place ? { latitude, longitude } : null;
    }
    await rpc("updateSchedule", change);
    await loadSchedule();
    toast("Schedule saved.");
  } catch (error) {
    complain(error);
  }
});

// MARK: - Announcements, uploads

$("say").addEventListener("submit", async (event) => {
  event.preventDefault();
  // "Now" cuts in; "Say" queues it at the back.
  const now = event.submitter && event.submitter.id === "say-now";
  try {
    await rpc("say", now ? { text: $("say-text").value, now: true } : { text: $("say-text").value });
    toast(now ? `Saying “${$("say-text").value}” now.` : `Queued “${$("say-text").value}”.`);
    $("say-text").value = "";
  } catch (error) {
    complain(error);
  }
});

// A clip sent to POST /clips, as the file input and the recorder both send one: resolves to the
// clip jukeboxd added, or rejects with the refusal. The upload's progress goes to `progress`.
function sendClip(body, name, fields, progress) {
  return new Promise((resolve, reject) => {
    const request = new XMLHttpRequest();
    // Spaces as %20: the server reads a query's "+" as itself.
    const query = Object.entries({ name, ...fields }).map(([key, value]) => `${key}=${encodeURIComponent(value)}`).join("&");
    request.open("POST", `/clips?${query}`);
    request.upload.onprogress = (event) => { if (event.lengthComputable && progress) progress(event.loaded / event.total); };
    request.onload = () => {
      if (request.status === 401) return reject(new Unauthorized());
      let answer = {};
      try { answer = JSON.parse(request.responseText || "{}"); } catch { answer = {}; }
      if (request.status === 201) resolve(answer.clip);
      else reject(Failure.answered(answer, request.status));
    };
    request.onerror = () => reject(new Failure("unreachable", `${name} could not be sent`));
    request.send(body);
  });
}

$("add").addEventListener("click", () => $("upload").click());
$("upload").addEventListener("change", async () => {
  const file = $("upload").files[0];
  if (!file) return;
  // Beside the buttons, in room the row already has, only while a file is on its way.
  $("upload-progress").value = 0;
  $("upload-progress").hidden = false;
  toast(`Sending ${file.name}…`);
  try {
    const clip = await sendClip(file, file.name, {}, (part) => { $("upload-progress").value = part; });
    toast(`Added ${clip.title}.`);
  } catch (error) {
    complain(error, { "unplayable-clip": `${file.name} is not sound jukeboxd can play. Nothing was added.` });
  } finally {
    $("upload-progress").hidden = true;
    $("upload").value = "";
    refreshSoon();
  }
});

// MARK: - Recording a clip

// A recording is at most this long; it stops by itself then.
const MAX_RECORDING = 300;
// Leading and trailing silence goes: what is quieter than this, and 40 dB under the loudest
// moment, is silence. A little is kept before and after the sound, so no word is cut.
const SILENCE_DB = -50;
const KEEP_BEFORE = 0.15;
const KEEP_AFTER = 0.25;

let recording = null;
let recorded = null;
let preview = null;

// What the browser records in: Opus in WebM (Chrome, Firefox), AAC in MP4 (Safari).
function recordingType() {
  return ["audio/webm;codecs=opus", "audio/mp4", "audio/ogg;codecs=opus"].find((type) => MediaRecorder.isTypeSupported(type)) || "";
}

function seconds(value) {
  return `${value.toFixed(1)} s`;
}

// The recording, mixed to one channel.
function mono(buffer) {
  const samples = new Float32Array(buffer.length);
  for (let channel = 0; channel < buffer.numberOfChannels; channel += 1) {
    const data = buffer.getChannelData(channel);
    for (let i = 0; i < data.length; i += 1) samples[i] += data[i] / buffer.numberOfChannels;
  }
  return samples;
}

// The loudest sample of each 10 ms.
function peaks(samples, rate) {
  const block = Math.max(1, Math.round(rate / 100));
  const result = new Float32Array(Math.ceil(samples.length / block));
  for (let i = 0; i < samples.length; i += 1) result[Math.floor(i / block)] = Math.max(result[Math.floor(i / block)], Math.abs(samples[i]));
  return result;
}

// Where the sound begins and ends, in seconds; null when nothing but silence was heard.
function soundBetween(blockPeaks, duration) {
  const loudest = blockPeaks.reduce((a, b) => Math.max(a, b), 0);
  const floor = Math.max(10 ** (SILENCE_DB / 20), loudest * 10 ** (-40 / 20));
  const first = blockPeaks.findIndex((peak) => peak > floor);
  if (loudest === 0 || first < 0) return null;
  let last = blockPeaks.length - 1;
  while (blockPeaks[last] <= floor) last -= 1;
  return { start: Math.max(0, first / 100 - KEEP_BEFORE), end: Math.min(duration, (last + 1) / 100 + KEEP_AFTER) };
}

function drawWave() {
  const canvas = $("record-wave");
  const context = canvas.getContext("2d");
  const style = getComputedStyle(document.documentElement);
  context.clearRect(0, 0, canvas.width, canvas.height);
  if (!recorded) return;
  const { blockPeaks, duration } = recorded;
  const start = Number($("trim-start").value), end = Number($("trim-end").value);
  const middle = canvas.height / 2;
  for (let x = 0; x < canvas.width; x += 1) {
    const from = Math.floor((x / canvas.width) * blockPeaks.length), to = Math.max(from + 1, Math.floor(((x + 1) / canvas.width) * blockPeaks.length));
    const peak = blockPeaks.subarray(from, to).reduce((a, b) => Math.max(a, b), 0);
    const at = (x / canvas.width) * duration;
    context.fillStyle = at >= start && at <= end ? style.getPropertyValue("--accent") : style.getPropertyValue("--line");
    const height = Math.max(1, peak * middle);
    context.fillRect(x, middle - height, 1, height * 2);
  }
}

function showTrim() {
  const start = Number($("trim-start").value), end = Number($("trim-end").value);
  $("trim-text").textContent = `Keeps ${seconds(end - start)}, from ${seconds(start)} to ${seconds(end)}.`;
  drawWave();
}

for (const id of ["trim-start", "trim-end"]) {
  $(id).addEventListener("input", () => {
    // The two handles never cross: at least a tenth of a second is kept.
    const start = $("trim-start"), end = $("trim-end");
    if (Number(end.value) - Number(start.value) < 0.1) $(id).value = id === "trim-start" ? Number(end.value) - 0.1 : Number(start.value) + 0.1;
    showTrim();
    stopPreview();
  });
}

// No recording to trim, hear or save (before the first, and while the next is made).
function forgetRecording(saying) {
  recorded = null;
  for (const id of ["trim-start", "trim-end", "record-preview", "record-save"]) $(id).disabled = true;
  $("trim-text").textContent = saying;
  drawWave();
}

function resetRecorder() {
  forgetRecording("Nothing recorded yet.");
  $("record-toggle").textContent = "Record";
  $("record-toggle").disabled = false;
  $("record-time").textContent = clock(0);
  $("record-level").value = 0;
  $("record-title").value = "";
  $("record-weight").value = 1;
  showWindows("record-windows", []);
  done("record-message", "");
}

$("record").addEventListener("click", () => {
  // Browsers give a page the microphone only over HTTPS (or on the machine itself).
  if (!window.isSecureContext || !navigator.mediaDevices || !window.MediaRecorder) {
    complain(new Failure("insecure", "the page was not opened over HTTPS, so the browser gives it no microphone"),
      { insecure: "Recording needs the page opened over https://: trust jukeboxd's certificate once on this phone (the link at the end of History; “Trusting it on a phone, once” in docs/web.md)." });
    return;
  }
  resetRecorder();
  $("recorder").showModal();
});

async function startRecording() {
  // As recorded, without the processing meant for calls: the loudness is evened on the Pi.
  const stream = await navigator.mediaDevices.getUserMedia({ audio: { echoCancellation: false, noiseSuppression: false, autoGainControl: false } });
  let context, recorder;
  try {
    context = new AudioContext();
    const type = recordingType();
    recorder = new MediaRecorder(stream, type ? { mimeType: type } : {});
  } catch (error) {
    // The microphone is let go of at once, not left on.
    for (const track of stream.getTracks()) track.stop();
    if (context) context.close();
    throw error;
  }
  const analyser = context.createAnalyser();
  analyser.fftSize = 2048;
  context.createMediaStreamSource(stream).connect(analyser);
  const chunks = [];
  recorder.ondataavailable = (event) => { if (event.data.size) chunks.push(event.data); };
  const began = performance.now();
  const frame = new Float32Array(analyser.fftSize);
  // The level (peak, from -60 to 0 dBFS) and the time, ten times a second.
  const timer = setInterval(() => {
    analyser.getFloatTimeDomainData(frame);
    const peak = frame.reduce((a, b) => Math.max(a, Math.abs(b)), 0);
    $("record-level").value = peak > 0 ? Math.max(0, 1 + (20 * Math.log10(peak)) / 60) : 0;
    const elapsed = (performance.now() - began) / 1000;
    $("record-time").textContent = clock(elapsed);
    if (elapsed >= MAX_RECORDING) stopRecording().catch((error) => problem("record-message", error));
  }, 100);
  recorder.start(250);
  recording = { stream, context, recorder, chunks, timer };
  $("record-toggle").textContent = "Stop";
  // "Record again" replaces the last recording: it cannot be saved while the next is made.
  forgetRecording("Recording…");
}

async function stopRecording() {
  if (!recording) return;
  const { stream, context, recorder, chunks, timer } = recording;
  recording = null;
  clearInterval(timer);
  $("record-toggle").disabled = true;
  const stopped = new Promise((resolve) => recorder.addEventListener("stop", resolve, { once: true }));
  recorder.stop();
  await stopped;
  for (const track of stream.getTracks()) track.stop();
  $("record-level").value = 0;
  try {
    const blob = new Blob(chunks, { type: recorder.mimeType });
    const buffer = await context.decodeAudioData(await blob.arrayBuffer());
    const samples = mono(buffer);
    const blockPeaks = peaks(samples, buffer.sampleRate);
    recorded = { samples, rate: buffer.sampleRate, duration: buffer.duration, blockPeaks };
  } finally {
    context.close();
    $("record-toggle").textContent = "Record again";
    $("record-toggle").disabled = false;
  }
  const sound = soundBetween(recorded.blockPeaks, recorded.duration);
  for (const id of ["trim-start", "trim-end"]) {
    $(id).max = recorded.duration.toFixed(2);
    $(id).disabled = !sound;
  }
  if (!sound) {
    recorded = null;
    drawWave();
    problem("record-message", new Failure("silent", "the recording's every sample is below -50 dBFS"),
      { silent: "Nothing was heard. Is the microphone muted? Record again." });
    return;
  }
  $("trim-start").value = sound.start.toFixed(2);
  $("trim-end").value = sound.end.toFixed(2);
  $("record-preview").disabled = false;
  $("record-save").disabled = false;
  done("record-message", "");
  showTrim();
}

$("record-toggle").addEventListener("click", () => {
  stopPreview();
  (recording ? stopRecording() : startRecording()).catch((error) => {
    const denied = error && error.name === "NotAllowedError";
    problem("record-message", new Failure(denied ? "no-microphone" : "recording-failed", String(error.message || error)),
      { "no-microphone": "The browser did not give the page the microphone. Allow it in the site's settings, then record again.",
        "recording-failed": "The recording did not work. Record again." });
  });
});

// The kept part, played on the phone.
function stopPreview() {
  if (!preview) return;
  preview.close();
  preview = null;
  $("record-preview").textContent = "Listen";
}

$("record-preview").addEventListener("click", () => {
  if (preview) return stopPreview();
  const start = Number($("trim-start").value), end = Number($("trim-end").value);
  preview = new AudioContext();
  const buffer = preview.createBuffer(1, recorded.samples.length, recorded.rate);
  buffer.copyToChannel(recorded.samples, 0);
  const source = preview.createBufferSource();
  source.buffer = buffer;
  source.connect(preview.destination);
  source.onended = stopPreview;
  source.start(0, start, end - start);
  $("record-preview").textContent = "Stop listening";
});

// The kept part as a 16-bit WAV file, at the rate it was recorded in.
function wav(samples, rate) {
  const bytes = new DataView(new ArrayBuffer(44 + samples.length * 2));
  const text = (at, word) => { for (let i = 0; i < word.length; i += 1) bytes.setUint8(at + i, word.charCodeAt(i)); };
  text(0, "RIFF"); bytes.setUint32(4, 36 + samples.length * 2, true); text(8, "WAVE");
  text(12, "fmt "); bytes.setUint32(16, 16, true); bytes.setUint16(20, 1, true); bytes.setUint16(22, 1, true);
  bytes.setUint32(24, rate, true); bytes.setUint32(28, rate * 2, true); bytes.setUint16(32, 2, true); bytes.setUint16(34, 16, true);
  text(36, "data"); bytes.setUint32(40, samples.length * 2, true);
  for (let i = 0; i < samples.length; i += 1) bytes.setInt16(44 + i * 2, Math.round(Math.max(-1, Math.min(1, samples[i])) * 32767), true);
  return new Blob([bytes], { type: "audio/wav" });
}

// A file name from the title: "Water the plants" → water-the-plants.wav.
function fileName(title) {
  const words = title.toLowerCase().normalize("NFKD").replace(/[^a-z0-9]+/g, "-").replace(/^-+|-+$/g, "").slice(0, 40).replace(/-+$/, "");
  return `${words || "recording"}.wav`;
}

$("record-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  stopPreview();
  const title = $("record-title").value.trim();
  if (!recorded || !title) return;
  const start = Math.round(Number($("trim-start").value) * recorded.rate), end = Math.round(Number($("trim-end").value) * recorded.rate);
  $("record-save").disabled = true;
  done("record-message", `Saving ${title}…`);
  try {
    const clip = await sendClip(wav(recorded.samples.subarray(start, end), recorded.rate), fileName(title), { title });
    // The weight and the windows, once the clip is in the session.
    const change = { id: clip.id };
    if (Number($("record-weight").value) !== 1) change.weight = Number($("record-weight").value);
    const windows = $("record-windows").read();
    if (windows.length) change.windows = windows;
    if (Object.keys(change).length > 1) await rpc("updateClip", change);
    $("recorder").close();
    toast(`Added ${clip.title}.`);
  } catch (error) {
    problem("record-message", error, { "unplayable-clip": "jukeboxd could not read the recording. Nothing was added; record again." });
  } finally {
    $("record-save").disabled = !recorded;
    refreshSoon();
  }
});

$("record-cancel").addEventListener("click", () => $("recorder").close());
$("recorder").addEventListener("close", () => {
  stopPreview();
  if (recording) stopRecording().catch(() => {});
});

// MARK: - Following the daemon

// Many events arrive together (a clip ends, the next starts): one refresh for all of them.
function refreshSoon() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => refresh().catch(complain), 100);
}

function follow() {
  if (events) events.close();
  events = new EventSource("/events");
  events.onopen = () => { retryDelay = 1000; $("banner").hidden = true; refreshSoon(); };
  for (const name of ["queued", "held", "playing", "finished", "cut", "removed", "paused", "resumed", "scheduled", "device", "session", "volume", "quiet", "bed", "plans", "alert"]) {
    events.addEventListener(name, refreshSoon);
  }
  // Lost (the daemon restarted, the Wi-Fi dropped): try again later, fetching everything
  // afresh, or asking to log in if the session did not survive.
  events.onerror = () => {
    events.close();
    $("banner").hidden = false;
    setTimeout(start, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 30000);
  };
}

function showLogin() {
  if (events) events.close();
  events = null;
  for (const dialog of document.querySelectorAll("dialog[open]")) dialog.close();
  $("app").hidden = true;
  $("login").hidden = false;
  $("password").focus();
}

async function start() {
  try {
    await refresh();
  } catch (error) {
    if (error instanceof Unauthorized) return showLogin();
    $("banner").hidden = false;
    setTimeout(start, retryDelay);
    retryDelay = Math.min(retryDelay * 2, 30000);
    return;
  }
  $("login").hidden = true;
  $("app").hidden = false;
  loadSchedule().catch(complain);
  follow();
}

// MARK: - Logging in and out

// After too many wrong passwords the server says how long to wait; the wait counts down.
let loginWait = null;
function countDown(seconds) {
  clearInterval(loginWait);
  const until = Date.now() + seconds * 1000;
  const show = () => {
    const left = Math.ceil((until - Date.now()) / 1000);
    if (left <= 0) {
      clearInterval(loginWait);
      done("login-error", "");
      return;
    }
    problem("login-error", new Failure("http-429", `too many wrong passwords from this address; try again in ${left} s`),
      { "http-429": `Too many wrong passwords. Try again in ${left} s.` });
  };
  show();
  loginWait = setInterval(show, 1000);
}

$("login").addEventListener("submit", async (event) => {
  event.preventDefault();
  let response;
  try {
    response = await fetch("/login", {
      method: "POST",
      headers: { "Content-Type": "application/x-www-form-urlencoded" },
      body: new URLSearchParams({ password: $("password").value }),
    });
  } catch {
    return problem("login-error", new Failure("unreachable", "the request did not reach jukeboxd"));
  }
  if (response.ok) {
    $("password").value = "";
    clearInterval(loginWait);
    done("login-error", "");
    start();
    return;
  }
  const answer = await response.json().catch(() => ({}));
  if (response.status === 429) return countDown(Number(response.headers.get("Retry-After")) || 60);
  problem("login-error", Failure.answered(answer, response.status), { "http-401": "That is not the password. Try again." });
});

$("logout").addEventListener("click", async () => {
  await fetch("/logout", { method: "POST", credentials: "same-origin" }).catch(() => null);
  showLogin();
});

// MARK: - The bar's controls, the tabs

$("pause").addEventListener("click", () => {
  const paused = $("pause").dataset.paused === "true";
  rpc(paused ? "resume" : "pause").then(() => { toast(paused ? "Playing again." : "Paused."); refreshSoon(); }).catch(complain);
});
$("skip").addEventListener("click", () => rpc("skip").then((result) => { toast("Skipped."); refreshSoon(); return result; }).catch(complain));
$("plan-set").addEventListener("click", async () => {
  const day = $("plan-day").value, choice = $("plan-choice").value;
  const dayName = day === "today" ? "today" : "tomorrow";
  const asked = choice === AS_PLANNED
    ? await ask(`Plan ${dayName} as planned?`, `What was set by hand for ${dayName} is cleared; the calendars and the rules decide.`, "Clear it")
    : await ask(`Change ${dayName}'s plan?`, `${dayName[0].toUpperCase() + dayName.slice(1)} rings the times of “${choice}”, whatever the calendar says.`, "Change it");
  if (!asked) return;
  rpc("setPlan", { date: day, plan: choice === AS_PLANNED ? null : choice })
    .then((result) => { toast(`${dayName[0].toUpperCase() + dayName.slice(1)}: ${result.plan || "no plan"} (${result.why}).`); refreshSoon(); })
    .catch(complain);
});

$("alert-start").addEventListener("click", async () => {
  const name = $("alert-name").value;
  if (!name || !await ask(`Start the ${name} alert?`, "It sounds at once, over everything and louder than the day's volume, and repeats until someone ends it.", "Start it")) return;
  rpc("alert", { start: name }).then(() => { toast(`The ${name} alert is on.`); refreshSoon(); }).catch(complain);
});
$("alert-end").addEventListener("click", async () => {
  if (!await ask("End the alert?", "It stops at once; its end clip plays, then what waited, in order.", "End it")) return;
  rpc("alert", { end: true }).then((result) => { toast(result.ended ? `The ${result.ended.name} alert ended.` : "No alert was on."); refreshSoon(); }).catch(complain);
});

// A button that turns something on or off: quiet, and the music bed's music.
function toggles(id, method, show, said) {
  $(id).addEventListener("click", () => {
    const on = $(id).getAttribute("aria-pressed") !== "true";
    rpc(method, { set: on ? "on" : "off" }).then((state) => { show(state); toast(said(on)); refreshSoon(); }).catch(complain);
  });
}
// Quiet until ended, or for the time chosen beside the button.
$("quiet").addEventListener("click", () => {
  const on = $("quiet").getAttribute("aria-pressed") !== "true", length = $("quiet-for").value;
  rpc("quiet", !on ? { set: "off" } : length ? { for: length } : { set: "on" }).then((state) => {
    showQuiet(state);
    toast(!on ? "Quiet ended." : length ? `Quiet ${$("quiet-for").selectedOptions[0].textContent}.` : "Quiet until you end it.");
    refreshSoon();
  }).catch(complain);
});
toggles("music", "bed", showBed, (on) => on ? "Music on." : "Music off.");

// One second of tone through the session's device; the answer says where it went and whether
// the device played it as a sound card does.
$("sound-test").addEventListener("click", () => {
  const state = $("sound-state");
  $("sound-test").disabled = true;
  state.classList.remove("problem");
  state.textContent = "Playing a test tone…";
  rpc("test").then((test) => {
    const took = test.took < 1 ? `${Math.round(test.took * 1000)} ms` : `${test.took.toFixed(2)} s`;
    // Two lines at most, the room the line keeps, so nothing below it moves.
    state.textContent = test.realTime
      ? `Played through ${test.device} in ${took}. Nothing heard? Check the speaker and its volume.`
      : `${test.device} took the tone in ${took}: not a sound card, so nothing is heard.`;
  }).catch((error) => {
    if (error instanceof Unauthorized) return showLogin();
    state.classList.add("problem");
    state.textContent = Failure.of(error).message;
  }).finally(() => { $("sound-test").disabled = false; });
});

$("clear").addEventListener("click", async () => {
  if (!(await ask("Clear the queue?", "Every waiting clip is taken off the queue. What plays now plays on.", "Clear"))) return;
  rpc("clear").then(() => { toast("The queue is clear."); refreshSoon(); }).catch(complain);
});

// The volume follows the slider while it moves, at most every 150 ms, with the latest value.
let volumeTimer = null;
let wantedVolume = null;
$("volume").addEventListener("input", () => {
  wantedVolume = $("volume-value").value = Number($("volume").value);
  if (volumeTimer) return;
  volumeTimer = setTimeout(() => {
    volumeTimer = null;
    rpc("volume", { level: wantedVolume }).then(() => { wantedVolume = null; }).catch((error) => { wantedVolume = null; complain(error); });
  }, 150);
});

for (const tab of document.querySelectorAll("[role=tab]")) {
  tab.addEventListener("click", () => {
    for (const other of document.querySelectorAll("[role=tab]")) {
      other.setAttribute("aria-selected", String(other === tab));
      $(other.getAttribute("aria-controls")).hidden = other !== tab;
    }
    window.scrollTo(0, 0);
  });
}

// The shell works offline as an installed app; what it shows always comes from the daemon.
if ("serviceWorker" in navigator && window.isSecureContext) navigator.serviceWorker.register("sw.js").catch(() => {});

// The certificate authority to trust is offered only where there is one: over HTTPS.
for (const link of document.querySelectorAll(".ca-link")) link.hidden = location.protocol !== "https:";
start();
