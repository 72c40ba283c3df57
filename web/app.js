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
// Whether the session has a cue: each clip then also offers to play with it.
let hasCue = false;

function draw(id, data, render) {
  const key = JSON.stringify(data);
  if (drawn[id] === key) return;
  drawn[id] = key;
  $(id).replaceChildren(...render());
}

class Unauthorized extends Error {}

async function rpc(method, params) {
  const response = await fetch("/rpc", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    credentials: "same-origin",
    body: JSON.stringify({ jsonrpc: "2.0", id: nextID++, method, params }),
  });
  if (response.status === 401) throw new Unauthorized();
  const answer = await response.json();
  if (answer.error) throw new Error(answer.error.message);
  return answer.result;
}

function clock(seconds) {
  const s = Math.floor(seconds || 0);
  return `${Math.floor(s / 60)}:${String(s % 60).padStart(2, "0")}`;
}

function button(label, name, action) {
  const element = document.createElement("button");
  element.type = "button";
  element.textContent = label;
  element.setAttribute("aria-label", name);
  element.addEventListener("click", () => action().catch(show));
  return element;
}

function show(error) {
  if (error instanceof Unauthorized) return showLogin();
  $("upload-message").textContent = error.message;
}

function item(text, ...controls) {
  const li = document.createElement("li");
  const span = document.createElement("span");
  span.textContent = text;
  li.append(span, ...controls.map((c) => { const gap = document.createTextNode(" "); return [gap, c]; }).flat());
  return li;
}

async function refresh() {
  const [status, queue, clips, history, next] = await Promise.all([
    rpc("status"), rpc("queue"), rpc("clips"), rpc("history", { limit: 10 }), rpc("next", { limit: 5 })]);
  $("banner").hidden = true;
  const playing = queue.playing;
  if (playing) {
    $("now").textContent = `${playing.entry.title} (${clock(playing.elapsed)} / ${clock(playing.total)})`;
    $("progress").value = playing.total ? (playing.elapsed || 0) / playing.total : 0;
  } else if (queue.waitingForDevice) {
    $("now").textContent = `${queue.waitingForDevice.title} is waiting for the audio device`;
    $("progress").value = 0;
  } else {
    $("now").textContent = "Nothing is playing.";
    $("progress").value = 0;
  }
  $("pause").hidden = status.paused;
  $("resume").hidden = !status.paused;
  showQuiet(status.quiet);
  // Not while the slider is being moved: its value is the one on its way.
  if (document.activeElement !== $("volume") && wantedVolume === null) $("volume").value = status.volume;
  const device = status.deviceState === "ok" ? "playing through" : status.deviceState.startsWith("retrying") ? "speaker unplugged?" : "idle:";
  $("device").textContent = `${device} ${status.device} (${status.deviceState}); up ${clock(status.uptime)}`;

  const held = queue.held || [];
  draw("queue", [queue.waiting, held], () => queue.waiting.concat(held).map((entry) =>
    item(`${entry.title} (from ${entry.origin}${entry.afterQuiet ? ", after quiet" : ""})`,
      button("Remove", `Remove ${entry.title}`, async () => { await rpc("remove", { tickets: [entry.ticket] }); })),
  ));
  $("clear").hidden = queue.waiting.length + held.length === 0;

  draw("clips", [hasCue, clips.clips], () => clips.clips.map((clip) => {
    const details = [clip.duration ? clock(clip.duration) : "", clip.enabled ? (clip.windowOpen ? "window open" : "window closed") : "disabled", `played ${clip.timesPlayed}×`];
    const play = [button("Play", `Play ${clip.title}`, async () => { await rpc("enqueue", { clips: [clip.id] }); })];
    if (hasCue) play.push(button("With cue", `Play ${clip.title} with the cue`, async () => { await rpc("enqueue", { clips: [clip.id], cue: true }); }));
    const li = item(`${clip.title} — ${details.filter(Boolean).join(", ")}`, ...play,
      button(clip.enabled ? "Disable" : "Enable", `${clip.enabled ? "Disable" : "Enable"} ${clip.title}`, async () => {
        await rpc("updateClip", { id: clip.id, enabled: !clip.enabled });
      }),
      button("Edit", `Edit ${clip.title}`, () => edit(clip.id)));
    if (clip.problem) {
      const problem = document.createElement("span");
      problem.className = "problem";
      problem.textContent = ` ${clip.problem}`;
      li.append(problem);
    }
    return li;
  }));

  draw("next", next, () => upcoming(next).map((line) => item(line)));

  draw("history", history.plays, () => history.plays.map((play) =>
    item(`${new Date(play.startedAt * 1000).toLocaleTimeString()} ${play.entry.title}: ${play.outcome}${play.reason ? ` (${play.reason})` : ""}`)));
}

// What will happen, in lines: fixed times, the next pick, quiet hours, today's sun.
function upcoming(next) {
  const when = (t) => new Date(t * 1000).toLocaleString([], { weekday: "short", hour: "2-digit", minute: "2-digit" });
  const lines = next.fixedTimes.map((play) => `${when(play.at)} ${play.title}${play.quiet ? " (skipped: quiet)" : ""}`);
  if (next.nextPick && !next.pickSkipped) lines.push(`Next random pick ${when(next.nextPick)}`);
  if (next.quietHours) lines.push(`Quiet hours ${when(next.quietHours.from)}${next.quietHours.to ? ` to ${when(next.quietHours.to)}` : ""}`);
  if (next.sun) lines.push(`Sun today: ${next.sun.map((s) => `${s.event} ${s.time}`).join(", ")}`);
  if (lines.length === 0) lines.push("Nothing planned.");
  return lines;
}

// Quiet: nothing jukeboxd starts by itself plays. The button turns it on or off by hand.
function showQuiet(quiet) {
  if (!quiet) return;
  const until = quiet.until ? new Date(quiet.until * 1000).toLocaleString([], { weekday: "short", hour: "2-digit", minute: "2-digit" }) : null;
  let text;
  if (quiet.quiet) text = (quiet.byHand ? "Quiet, set by hand" : "Quiet hours") + (until ? ` until ${until}` : quiet.byHand ? " until turned off" : "");
  else text = quiet.byHand ? `Quiet hours lifted until ${until}` : until ? `Quiet hours begin ${until}` : "";
  if (quiet.held) text += ` (${quiet.held} waiting for it to end)`;
  $("quiet-state").textContent = text;
  $("quiet").textContent = quiet.quiet ? "End quiet" : "Quiet";
  $("quiet").setAttribute("aria-pressed", String(quiet.quiet));
}

// Windows as people type them: "09:00-18:00@mon,fri, sunset-30m..23:00" (empty: always).
// Windows are parted by a comma and a space, or a comma before a digit; days by a comma
// alone. Where an end has an offset, ".." parts the ends.
function parseWindows(text) {
  return text.split(/,\s+|,(?=\d)/).map((part) => part.trim()).filter(Boolean).map((part) => {
    const [span, days] = part.split("@");
    const [from, to] = (span.includes("..") ? span.split("..") : span.split("-")).map((end) => (end || "").trim());
    const window = { from, to };
    if (days) window.days = days.split(",").map((day) => day.trim()).filter(Boolean);
    return window;
  });
}

function formatWindows(windows) {
  return (windows || []).map((w) => {
    const span = w.from.includes("-") || w.to.includes("-") ? `${w.from}..${w.to}` : `${w.from}-${w.to}`;
    return span + (w.days ? "@" + w.days.join(",") : "");
  }).join(", ");
}

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
  $("clip-windows").value = formatWindows(clip.windows);
  $("clip-at").value = formatTimes(clip.at);
  $("clip-delete-file").checked = false;
  $("clip-error").textContent = "";
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
    const windows = parseWindows($("clip-windows").value);
    if (JSON.stringify(windows) !== JSON.stringify(before.windows || [])) change.windows = windows;
    if ($("clip-at").value.trim() !== formatTimes(before.at)) {
      const times = parseTimes($("clip-at").value);
      change.at = times.length ? times : null;
    }
    await rpc("updateClip", change);
    $("editor").close();
    refreshSoon();
  } catch (error) {
    $("clip-error").textContent = error.message;
  }
});
$("clip-cancel").addEventListener("click", () => $("editor").close());
$("clip-remove").addEventListener("click", async () => {
  if (!confirm(`Remove ${editing.id} from the session?`)) return;
  try {
    await rpc("removeClip", { id: editing.id, deleteFile: $("clip-delete-file").checked, ifRevision: editing.revision });
    $("editor").close();
    refreshSoon();
  } catch (error) {
    $("clip-error").textContent = error.message;
  }
});

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
  $("active").value = formatWindows(session.activeHours);
  $("duration").value = session.duration || "";
  $("quiet-hours").value = formatWindows(session.quiet);
  $("location").value = session.location ? `${session.location.latitude},${session.location.longitude}` : "";
  loadedSchedule = session;
}

// The schedule as loaded, so only what changed is sent.
let loadedSchedule = {};

$("say").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    await rpc("say", { text: $("say-text").value });
    $("say-text").value = "";
  } catch (error) {
    show(error);
  }
});

$("schedule").addEventListener("submit", async (event) => {
  event.preventDefault();
  try {
    const change = {
      interval: { min: $("every-min").value, max: $("every-max").value },
      activeHours: parseWindows($("active").value), duration: $("duration").value || null,
    };
    if ($("quiet-hours").value.trim() !== formatWindows(loadedSchedule.quiet)) {
      const quiet = parseWindows($("quiet-hours").value);
      change.quiet = quiet.length ? quiet : null;
    }
    const place = $("location").value.replace(/\s/g, "");
    const loadedPlace = loadedSchedule.location ? `${loadedSchedule.location.latitude},${loadedSchedule.location.longitude}` : "";
    if (place !== loadedPlace) {
      const [latitude, longitude] = place.split(",").map(Number);
      change.location = place ? { latitude, longitude } : null;
    }
    await rpc("updateSchedule", change);
    loadSchedule().catch(show);
    $("upload-message").textContent = "Schedule saved.";
  } catch (error) {
    $("upload-message").textContent = error.message;
  }
});

// Many events arrive together (a clip ends, the next starts): one refresh for all of them.
function refreshSoon() {
  clearTimeout(refreshTimer);
  refreshTimer = setTimeout(() => refresh().catch(show), 100);
}

function follow() {
  if (events) events.close();
  events = new EventSource("/events");
  events.onopen = () => { retryDelay = 1000; $("banner").hidden = true; refreshSoon(); };
  for (const name of ["queued", "held", "playing", "finished", "removed", "paused", "resumed", "scheduled", "device", "session", "volume", "quiet"]) {
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
  loadSchedule().catch(show);
  follow();
}

$("login").addEventListener("submit", async (event) => {
  event.preventDefault();
  const response = await fetch("/login", {
    method: "POST",
    headers: { "Content-Type": "application/x-www-form-urlencoded" },
    body: new URLSearchParams({ password: $("password").value }),
  });
  if (response.ok) {
    $("password").value = "";
    $("login-error").textContent = "";
    start();
  } else {
    const answer = await response.json().catch(() => ({}));
    $("login-error").textContent = answer.error ? answer.error.message : "Could not log in.";
  }
});

$("pause").addEventListener("click", () => rpc("pause").then(refreshSoon).catch(show));
$("resume").addEventListener("click", () => rpc("resume").then(refreshSoon).catch(show));
$("skip").addEventListener("click", () => rpc("skip").then(refreshSoon).catch(show));
$("quiet").addEventListener("click", () => {
  const on = $("quiet").getAttribute("aria-pressed") !== "true";
  rpc("quiet", { set: on ? "on" : "off" }).then((quiet) => { showQuiet(quiet); refreshSoon(); }).catch(show);
});
$("clear").addEventListener("click", () => {
  if (confirm("Remove every waiting clip?")) rpc("clear").then(refreshSoon).catch(show);
});

// The volume follows the slider while it moves, at most every 150 ms, with the latest value.
let volumeTimer = null;
let wantedVolume = null;
$("volume").addEventListener("input", () => {
  wantedVolume = Number($("volume").value);
  if (volumeTimer) return;
  volumeTimer = setTimeout(() => {
    volumeTimer = null;
    rpc("volume", { level: wantedVolume }).then(() => { wantedVolume = null; }).catch(show);
  }, 150);
});

$("upload").addEventListener("change", () => {
  const file = $("upload").files[0];
  if (!file) return;
  const request = new XMLHttpRequest();
  request.open("POST", `/clips?name=${encodeURIComponent(file.name)}`);
  $("upload-progress").hidden = false;
  request.upload.onprogress = (event) => { if (event.lengthComputable) $("upload-progress").value = event.loaded / event.total; };
  request.onload = () => {
    $("upload-progress").hidden = true;
    const answer = JSON.parse(request.responseText || "{}");
    $("upload-message").textContent = request.status === 201 ? `Added ${answer.clip.title}.` : (answer.error ? answer.error.message : "The upload failed.");
    $("upload").value = "";
    refreshSoon();
  };
  request.onerror = () => { $("upload-progress").hidden = true; $("upload-message").textContent = "The upload failed."; };
  request.send(file);
});

start();
