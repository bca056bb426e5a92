/* SPDX-License-Identifier: LGPL-2.1-or-later */
/*
 * The iosched page: every disk ioschedd manages, live from the properties of org.iosched1
 * (cockpit.dbus() proxies: the object manager's InterfacesAdded/Removed and
 * PropertiesChanged, no polling), with Plan, Apply, Set and Reset. ioschedd asks polkit
 * before it changes anything; what the bus answers, an error included, is shown as text.
 * Plain JavaScript, no build step; the only script besides this one is Cockpit's own
 * base1/cockpit.js.
 */
"use strict";

(function () {
    const BUS_NAME = "org.iosched1";
    const MANAGER_PATH = "/org/iosched1";
    const MANAGER_IFACE = "org.iosched1.Manager";
    const DISK_IFACE = "org.iosched1.Disk";
    const DISK_PATH = "/org/iosched1/disk";

    /* The keys SetPolicy takes that a person types most; any other key of iosched.conf(5)
     * can be typed too, and ioschedd says when one is unknown. */
    const COMMON_KEYS = ["scheduler", "nr_requests", "read_ahead_kb", "wbt_lat_usec", "max_sectors_kb",
        "rq_affinity", "nomerges", "add_random", "iostats", "iosched.low_latency",
        "iosched.slice_idle", "iosched.read_expire", "iosched.write_expire", "iosched.fifo_batch"];

    /* -------- What a disk object says, in the page's terms: the one place that knows the
     * properties of org.iosched1.Disk (org.iosched1(5)). -------- */

    /* The current value of a configuration key, as text; null: the kernel shows none.
     * Current (a{ss}) is keyed and spelt like the configuration, so it compares with
     * Desired's text. */
    function currentValue(p, key) {
        const v = (p.Current || {})[key];
        return v === undefined ? null : v;
    }

    function differs(key, current, desired, p) {
        if (current === null)
            return true;
        if (key === "scheduler") {
            /* An ordered list: the first one the kernel offers wins. */
            const offered = p.AvailableSchedulers || [];
            const want = desired.split(/\s+/).map(s => s === "deadline" ? "mq-deadline" : s)
                    .find(s => offered.includes(s));
            return want !== undefined && want !== current;
        }
        return current !== desired;
    }

    function diskView(p) {
        /* Device: transport, rotational, queues, stack (role, dm kind, above). */
        const [transport, rotational] = p.Device || ["", false];
        const keys = (p.Desired || []).map(([key, value, rule, file, line]) => {
            const current = currentValue(p, key);
            return { key, current, desired: value, rule, file, line, differs: differs(key, current, value, p) };
        });
        return {
            name: p.Name,
            transport: transport || "",
            rotational: !!rotational,
            scheduler: p.Scheduler || "",
            keys,
            rules: (p.MatchedRules || []).map(([rule, file, line]) => ({ rule, file, line })),
            lastApplied: p.LastApplied || 0,
            lastChanges: (p.LastChanges || []).map(([key, from, to]) => ({ key, from, to })),
            lastError: p.LastError || "",
        };
    }

    /* -------- Helpers. -------- */

    /* An element with attributes and children; text goes in as text, never as markup. */
    function el(tag, attrs, ...children) {
        const e = document.createElement(tag);
        for (const [k, v] of Object.entries(attrs || {})) {
            if (k === "class")
                e.className = v;
            else if (k.startsWith("on"))
                e.addEventListener(k.slice(2), v);
            else if (v !== false && v !== null && v !== undefined)
                e.setAttribute(k, v === true ? "" : v);
        }
        for (const c of children.flat())
            if (c !== null && c !== undefined && c !== false)
                e.append(c instanceof Node ? c : String(c));
        return e;
    }

    /* A bus error as text: its D-Bus name and message, or Cockpit's problem. */
    function errorText(e) {
        if (!e)
            return "unknown error";
        const name = e.name && e.name !== "Error" ? e.name + ": " : "";
        return name + (e.message || e.problem || String(e));
    }

    function showError(what, e) {
        const box = document.getElementById("errors");
        const line = el("div", { class: "alert error" },
                        el("span", {}, what + ": " + errorText(e)),
                        el("button", { type: "button", class: "link", "aria-label": "Dismiss", onclick: () => line.remove() }, "×"));
        box.append(line);
    }

    function timeText(usec) {
        if (!usec)
            return "never";
        const t = new Date(usec / 1000);
        const two = n => String(n).padStart(2, "0");
        return t.getFullYear() + "-" + two(t.getMonth() + 1) + "-" + two(t.getDate()) + " " +
            two(t.getHours()) + ":" + two(t.getMinutes()) + ":" + two(t.getSeconds());
    }

    function classText(d) {
        const kind = d.rotational ? "rotational" : "solid-state";
        return d.transport ? d.transport + ", " + kind : kind;
    }

    /* -------- The bus. -------- */

    const client = cockpit.dbus(BUS_NAME, { bus: "system", superuser: "try" });
    const manager = client.proxy(MANAGER_IFACE, MANAGER_PATH);
    const disks = client.proxies(DISK_IFACE, DISK_PATH);

    /* A method of the manager; buttons stay disabled until it answers. */
    function call(method, args, buttons, what) {
        for (const b of buttons)
            b.disabled = true;
        return client.call(MANAGER_PATH, MANAGER_IFACE, method, args)
                .catch(e => { showError(what, e); return null; })
                .finally(() => { for (const b of buttons) b.disabled = false; });
    }

    /* -------- The table: a row per disk, and its details when opened. --------
     * The elements of a row are made once; a change of the disk's properties refills its
     * cells, so a button keeps working and a form being typed in keeps its text and focus. */

    const rows = new Map();   /* object path -> DiskRow */

    function keyList(d) {
        if (d.keys.length === 0)
            return [el("span", { class: "muted" }, "no rule sets a key")];
        return [el("ul", { class: "keys" }, d.keys.map(k =>
            el("li", { class: k.differs ? "differs" : "", "data-key": k.key },
               el("span", { class: "key" }, k.key), " ",
               el("span", { class: "current" }, k.current === null ? "–" : k.current),
               k.differs ? [" → ", el("span", { class: "desired" }, k.desired)] : null)))];
    }

    function ruleList(d) {
        return d.rules.map(r => el("div", { class: "rule" }, r.file + ":" + r.line, " ",
                                   el("span", { class: "muted" }, "[" + r.rule + "]")));
    }

    function changeList(d) {
        return [el("div", { class: "time" }, timeText(d.lastApplied)),
                d.lastChanges.map(c => el("div", { class: "change" }, c.key + ": " + c.from + " → " + c.to))];
    }

    function button(cls, label, onclick) {
        return el("button", { type: "button", class: cls, onclick }, label);
    }

    /* A disk's key table and its Set form. */
    function DiskDetails(row) {
        const key = el("input", { type: "text", list: "iosched-keys", placeholder: "key", "aria-label": "Key", class: "set-key" });
        const value = el("input", { type: "text", placeholder: "value", "aria-label": "Value", class: "set-value" });
        const runtime = el("input", { type: "checkbox", class: "set-runtime" });
        const setPolicy = (settings, b, what) =>
            call("SetPolicy", [row.name, settings, runtime.checked], [b], row.name + ": SetPolicy" + what);
        const set = button("set", "Set", () =>
            setPolicy({ [key.value.trim()]: cockpit.variant("s", value.value) }, set, ""));
        const resetAll = button("reset-all", "Reset all keys", () =>
            call("ResetPolicy", [row.name, runtime.checked], [resetAll], row.name + ": ResetPolicy"));
        const keys = el("tbody");
        const error = el("p", { class: "error" });

        this.tr = el("tr", { class: "details", "data-path": row.path },
                     el("td", { colspan: 8 },
                        el("table", { class: "key-table" },
                           el("thead", {}, el("tr", {}, ["Key", "Current", "Desired", "Set by", ""].map(h => el("th", {}, h)))),
                           keys),
                        el("div", { class: "set-form" }, key, " = ", value, " ",
                           el("label", {}, runtime, " until reboot"), " ", set, " ", resetAll),
                        error));
        this.update = function (d) {
            keys.replaceChildren(...d.keys.map(k => {
                /* An empty value takes the key out of the disk's drop-in (org.iosched1(5)). */
                const reset = button("reset link", "Reset", () =>
                    setPolicy({ [k.key]: cockpit.variant("s", "") }, reset, " " + k.key));
                return el("tr", { class: k.differs ? "differs" : "", "data-key": k.key },
                          el("td", {}, k.key), el("td", {}, k.current === null ? "–" : k.current),
                          el("td", {}, k.desired), el("td", {}, k.file + ":" + k.line + " [" + k.rule + "]"),
                          el("td", {}, reset));
            }));
            error.textContent = d.lastError;
        };
    }

    function DiskRow(path) {
        const self = this;
        const cells = {};
        for (const c of ["kind", "scheduler", "keys", "rules", "change", "error"])
            cells[c] = el("td", { class: c });
        const name = el("th", { scope: "row" });
        const open = button("open link", "More", () => {
            if (self.details) {
                self.details.tr.remove();
                self.details = null;
            } else {
                self.details = new DiskDetails(self);
                self.details.update(self.view);
                self.tr.after(self.details.tr);
            }
            open.textContent = self.details ? "Less" : "More";
            open.setAttribute("aria-expanded", String(!!self.details));
        });
        const planButton = button("plan", "Plan", () => plan([self.name], [planButton]));
        const apply = button("apply", "Apply", () => call("Apply", [self.name], [apply], self.name + ": Apply"));

        this.path = path;
        this.details = null;
        this.tr = el("tr", { class: "disk", "data-path": path },
                     name, cells.kind, cells.scheduler, cells.keys, cells.rules, cells.change, cells.error,
                     el("td", { class: "actions" }, planButton, apply, open));
        this.update = function (d) {
            self.view = d;
            self.name = d.name;
            self.tr.dataset.disk = d.name;
            self.tr.classList.toggle("differs", d.keys.some(k => k.differs));
            self.tr.classList.toggle("unmatched", d.rules.length === 0);
            name.textContent = d.name;
            cells.kind.textContent = classText(d);
            cells.scheduler.textContent = d.scheduler || "–";
            cells.keys.replaceChildren(...keyList(d));
            cells.rules.replaceChildren(...ruleList(d));
            cells.change.replaceChildren(...changeList(d).flat());
            cells.error.textContent = d.lastError;
            if (self.details) {
                self.details.tr.classList.toggle("unmatched", d.rules.length === 0);
                self.details.update(d);
            }
        };
        this.remove = function () {
            self.tr.remove();
            if (self.details)
                self.details.tr.remove();
        };
    }

    /* The explicit properties the table shows are not in GetManagedObjects or
     * PropertiesChanged's values (org.iosched1(5)). When PropertiesChanged invalidates one,
     * cockpit-bridge's cache reads it (a Get) and the proxy has it, with a "changed" event;
     * when a disk appears, the page reads them itself, once: "added" and disks.wait both
     * ask, one reading a disk is in flight. path -> { name: value }, the proxy's wins. */
    const EXPLICIT = ["AvailableSchedulers", "Current", "Desired", "MatchedRules", "LastChanges"];
    const explicit = new Map();
    const reading = new Map();   /* path -> the reading in flight (a Promise) */

    function loadExplicit(path) {
        if (reading.has(path))
            return reading.get(path);
        const r = Promise.all(EXPLICIT.map(n =>
            client.call(path, "org.freedesktop.DBus.Properties", "Get", [DISK_IFACE, n])
                    .then(([v]) => [n, v.v])
                    .catch(() => null)))
                .then(values => {
                    /* The disk went (and maybe came back) meanwhile: not its values. */
                    if (reading.get(path) !== r)
                        return;
                    reading.delete(path);
                    explicit.set(path, Object.fromEntries(values.filter(nv => nv)));
                    renderDisk(path);
                });
        reading.set(path, r);
        return r;
    }

    /* A disk's properties: the proxy's, the explicit ones the bridge has not read yet from
     * the page's reading. */
    function diskProperties(path) {
        const p = Object.assign({}, explicit.get(path));
        for (const [name, value] of Object.entries(disks[path]))
            if (value !== undefined)
                p[name] = value;
        return p;
    }

    function renderDisk(path) {
        let row = rows.get(path);
        const d = diskView(diskProperties(path));

        if (!row) {
            row = new DiskRow(path);
            row.update(d);
            const tbody = document.querySelector("#disks > tbody");
            const next = [...tbody.querySelectorAll("tr.disk")]
                    .find(r => r.dataset.disk.localeCompare(d.name, undefined, { numeric: true }) > 0);
            tbody.insertBefore(row.tr, next || null);
            rows.set(path, row);
        } else
            row.update(d);
        document.getElementById("no-disks").hidden = rows.size > 0;
    }

    function removeDisk(path) {
        const row = rows.get(path);
        if (!row)
            return;
        row.remove();
        rows.delete(path);
        explicit.delete(path);
        reading.delete(path);
        document.getElementById("no-disks").hidden = rows.size > 0;
    }

    /* -------- Plan: what applying would write, nothing written. -------- */

    function plan(names, buttons) {
        const out = document.getElementById("plan-output");
        const tbody = out.querySelector("tbody");
        for (const b of buttons)
            b.disabled = true;
        return Promise.all(names.map(n =>
            client.call(MANAGER_PATH, MANAGER_IFACE, "Plan", [n])
                    .then(([actions]) => actions.map(a => [n, ...a]))
                    .catch(e => { showError(n + ": Plan", e); return []; })))
                .then(results => {
                    tbody.replaceChildren(...results.flat().map(([n, key, current, desired, action]) =>
                        el("tr", { class: "action-" + action },
                           el("td", {}, n), el("td", {}, key), el("td", {}, current || "–"),
                           el("td", {}, desired), el("td", {}, action))));
                    /* A plan is a reading of one moment: said so, as the table goes on changing. */
                    document.getElementById("plan-title").textContent =
                        (names.length === 1 ? "Plan for " + names[0] : "Plan for every disk") +
                        ", read at " + timeText(Date.now() * 1000).slice(11);
                    out.hidden = false;
                })
                .finally(() => { for (const b of buttons) b.disabled = false; });
    }

    /* -------- The manager: version, counters, configuration errors. -------- */

    function renderManager() {
        const daemon = document.getElementById("daemon");
        if (!manager.valid) {
            daemon.textContent = "ioschedd is not running";
            return;
        }
        daemon.textContent = "ioschedd " + manager.Version;
        document.getElementById("counters").textContent =
            "Since ioschedd started: " + manager.WritesDone + " values written, " +
            manager.WritesSkipped + " already right, " + manager.WriteErrors + " failed writes.";
        const errors = manager.ConfigErrors || [];
        document.getElementById("config-errors").hidden = errors.length === 0;
        document.getElementById("config-error-list").replaceChildren(...errors.map(e => el("li", {}, e)));
        document.getElementById("plan-all").disabled = false;
        document.getElementById("apply-all").disabled = false;
    }

    function init() {
        document.body.append(el("datalist", { id: "iosched-keys" }, COMMON_KEYS.map(k => el("option", { value: k }))));
        const planAll = document.getElementById("plan-all");
        const applyAll = document.getElementById("apply-all");
        planAll.addEventListener("click", () =>
            plan([...rows.values()].map(r => r.name).sort((a, b) => a.localeCompare(b, undefined, { numeric: true })), [planAll]));
        applyAll.addEventListener("click", () => call("ApplyAll", [], [applyAll], "ApplyAll"));
        const onlyMatched = document.getElementById("only-matched");
        onlyMatched.addEventListener("change", () =>
            document.body.classList.toggle("only-matched", onlyMatched.checked));

        manager.addEventListener("changed", renderManager);
        manager.wait(renderManager);
        disks.addEventListener("added", (ev, p) => { renderDisk(p.path); loadExplicit(p.path); });
        disks.addEventListener("changed", (ev, p) => renderDisk(p.path));
        disks.addEventListener("removed", (ev, p) => removeDisk(p.path));
        disks.wait(() => {
            const paths = Object.keys(disks);
            for (const path of paths)
                renderDisk(path);
            Promise.all(paths.map(loadExplicit))
                    .finally(() => { document.body.dataset.loaded = "true"; });
        });
        client.addEventListener("close", (ev, options) =>
            showError("The connection to the system bus closed", options));
    }

    document.addEventListener("DOMContentLoaded", init);
}());
