/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>

#include "json.h"
#include "log.h"
#include "report.h"
#include "util.h"
#include "writers.h"

/* Where each outcome is counted in a ReportSummary. */
static const size_t summary_offsets[_OUTCOME_MAX] = {
        [OUTCOME_WOULD_WRITE] = offsetof(ReportSummary, would_write),
        [OUTCOME_SKIPPED] = offsetof(ReportSummary, skipped),
        [OUTCOME_UNSUPPORTED] = offsetof(ReportSummary, unsupported),
        [OUTCOME_REFUSED] = offsetof(ReportSummary, refused),
        [OUTCOME_DEFERRED] = offsetof(ReportSummary, deferred),
        [OUTCOME_WRITTEN] = offsetof(ReportSummary, written),
        [OUTCOME_FAILED] = offsetof(ReportSummary, failed),
        [OUTCOME_GONE] = offsetof(ReportSummary, gone),
};

static unsigned *summary_counter(ReportSummary *s, Outcome o) {
        return (unsigned) o < _OUTCOME_MAX ? (unsigned *) ((char *) s + summary_offsets[o]) : NULL;
}

void report_summarize(const Plan *report, ReportSummary *ret) {
        assert(ret);
        *ret = (ReportSummary) {};
        for (size_t i = 0; report && i < report->n_actions; i++) {
                const Action *a = &report->actions[i];
                unsigned *c = summary_counter(ret, a->outcome);

                if (c)
                        (*c)++;
                if (a->outcome == OUTCOME_FAILED && !ret->first_failure)
                        ret->first_failure = a;
        }
}

void report_summary_add(ReportSummary *total, const ReportSummary *one) {
        assert(total && one);
        for (Outcome o = 0; o < _OUTCOME_MAX; o++)
                *summary_counter(total, o) += *summary_counter((ReportSummary *) one, o);
        if (!total->first_failure)
                total->first_failure = one->first_failure;
}

void report_log(const char *name, const Plan *report) {
        assert(name && report);

        for (size_t i = 0; i < report->n_actions; i++) {
                const Action *a = &report->actions[i];

                /* A change says whether it put back what someone else changed, and who else
                 * writes the key: the fight an admin looks for. */
                if (a->outcome == OUTCOME_WRITTEN)
                        log_info("%s: %s %s -> %s (rule %s, %s:%u)%s%s%s", name, a->key, strna(a->current),
                                 strna(a->result ?: a->write), a->rule, a->file, a->line,
                                 a->changed_back ? "; changed back" : "", a->others ? "; also written by " : "",
                                 strempty(a->others));
                else if (a->outcome == OUTCOME_FAILED)
                        log_warning("%s: %s: %s (rule %s, %s:%u)", name, a->key, strna(a->reason),
                                    a->rule, a->file, a->line);
                else if (a->outcome == OUTCOME_GONE)
                        log_debug("%s: went away while %s was being set.", name, a->key);
        }
}

void report_print_text(FILE *f, const Disk *d, const Plan *report, bool verbose) {
        assert(f && report);

        if (d)
                /* The stack role of a disk in one: "multipath-path of dm-0", "dm LVM". */
                fprintf(f, "%s (%s%s%s%s%s%s%s%s, scheduler %s)\n", report->disk,
                        transport_to_string(d->transport), d->rotational == 1 ? ", rotational" : "",
                        d->stack.role != STACK_ROLE_DISK ? ", " : "",
                        d->stack.role != STACK_ROLE_DISK ? stack_role_to_string(d->stack.role) : "",
                        d->stack.dm_kind ? " " : "", strempty(d->stack.dm_kind), d->stack.upper ? " of " : "",
                        strempty(d->stack.upper), d->scheduler ?: "n/a");
        else
                fprintf(f, "%s\n", report->disk);
        if (report->n_actions == 0) {
                fprintf(f, "  no rule matches: nothing to do, the kernel's values stand\n");
                return;
        }
        int wk = 3, wn = 7, wd = 7, wo = 7;

        /* Column widths from this disk's values, so long ones do not shift the rest. */
        for (size_t i = 0; i < report->n_actions; i++) {
                const Action *a = &report->actions[i];
                const char *now = a->outcome == OUTCOME_WRITTEN ? (a->result ?: a->write) : a->current;

                wk = MAX(wk, (int) strlen(a->key));
                wn = MAX(wn, (int) strlen(strna(now)));
                wd = MAX(wd, (int) strlen(a->desired));
                wo = MAX(wo, (int) strlen(action_outcome_label(a)));
        }
        fprintf(f, "  %-*s  %-*s  %-*s  %-*s  %s\n", wk, "KEY", wn, "CURRENT", wd, "DESIRED", wo,
                "RESULT", "WHY");
        for (size_t i = 0; i < report->n_actions; i++) {
                const Action *a = &report->actions[i];
                const char *now = a->outcome == OUTCOME_WRITTEN ? (a->result ?: a->write) : a->current;

                fprintf(f, "  %-*s  %-*s  %-*s  %-*s  %s", wk, a->key, wn, strna(now), wd,
                        a->desired, wo, action_outcome_label(a), strempty(a->reason));
                if (verbose)
                        fprintf(f, " [%s:%u rule %s]", a->file, a->line, a->rule);
                fputc('\n', f);
        }
        report_print_writers(f, d);
        if (report_iocost_two_writers(d, report))
                fprintf(f, "  note: %s\n", report_note_text(REPORT_NOTE_TWO_WRITERS));
}

void report_print_writers(FILE *f, const Disk *d) {
        const OtherWriters *o = d ? d->writers : NULL;

        assert(f);
        for (size_t i = 0; o && i < o->n; i++) {
                _cleanup_(freep) char *text = writer_describe(&o->writers[i]), *key = writer_key(&o->writers[i]);

                fprintf(f, "  %s %s: %s\n", i == 0 ? "other writers:" : "              ", strna(key),
                        strna(text));
        }
}

static const char *const note_texts[_REPORT_NOTE_MAX] = {
        [REPORT_NOTE_TWO_WRITERS] = "systemd's 90-iocost.rules also writes io.cost.qos and io.cost.model for "
                                    "this disk, on every udev event (two writers); turn one of the two off "
                                    "(see iosched.conf(5))",
        [REPORT_NOTE_IOCOST_NA] = "iocost.* keys are not applicable on this system: no cgroup v2 hierarchy "
                                  "with the io controller",
};

const char *report_note_text(ReportNote n) {
        return (unsigned) n < _REPORT_NOTE_MAX ? note_texts[n] : NULL;
}

unsigned report_notes(const Disk *d, const Plan *report) {
        unsigned notes = 0;

        assert(report);
        if (report_iocost_two_writers(d, report))
                notes |= REPORT_NOTE_BIT(REPORT_NOTE_TWO_WRITERS);
        for (size_t i = 0; d && i < report->n_actions; i++)
                if (report->actions[i].attr->file != ATTR_FILE_QUEUE &&
                    report->actions[i].outcome == OUTCOME_UNSUPPORTED &&
                    DISK_IOCOST(d, ATTR_FILE_IOCOST_QOS).err == -ENOENT)
                        notes |= REPORT_NOTE_BIT(REPORT_NOTE_IOCOST_NA);
        return notes;
}

void report_log_notes(const char *name, unsigned notes, unsigned *told, int na_level) {
        assert(name && told);
        notes &= ~*told;
        if (notes & REPORT_NOTE_BIT(REPORT_NOTE_TWO_WRITERS))
                log_warning("%s: %s.", name, report_note_text(REPORT_NOTE_TWO_WRITERS));
        if (notes & REPORT_NOTE_BIT(REPORT_NOTE_IOCOST_NA))
                (void) log_full_errno(na_level, 0, "%s.", report_note_text(REPORT_NOTE_IOCOST_NA));
        *told |= notes;
}

bool report_iocost_two_writers(const Disk *d, const Plan *report) {
        assert(report);

        if (!d || !other_writers_find(d->writers, ATTR_IOCOST_ENABLE, NULL, WRITER_KIND_BIT(WRITER_SYSTEMD_IOCOST)))
                return false;
        for (size_t i = 0; i < report->n_actions; i++) {
                AttrFile f = report->actions[i].attr->file;

                if (f == ATTR_FILE_IOCOST_QOS || f == ATTR_FILE_IOCOST_MODEL)
                        return true;
        }
        return false;
}

void report_print_json(FILE *f, const Disk *d, const Plan *report, const char *note) {
        assert(f && report);

        fputs("{\"disk\":", f);
        json_string(f, report->disk);
        if (d) {
                fputs(",\"transport\":", f);
                json_string(f, transport_to_string(d->transport));
                fprintf(f, ",\"rotational\":%s,\"queues\":%u,\"scheduler\":",
                        d->rotational == 1 ? "true" : "false", d->nr_hw_queues);
                json_string(f, d->scheduler);
                fputs(",\"role\":", f);
                json_string(f, stack_role_to_string(d->stack.role));
                fputs(",\"dm\":", f);
                json_string(f, d->stack.dm_kind);
                fputs(",\"above\":", f);
                json_string(f, d->stack.upper);
        }
        if (d && d->writers) {
                fputs(",\"other_writers\":[", f);
                for (size_t i = 0; i < d->writers->n; i++) {
                        const Writer *w = &d->writers->writers[i];
                        _cleanup_(freep) char *key = writer_key(w);
                        const JsonMember m[] = {
                                { "key", key }, { "owner", writer_kind_to_string(w->kind) },
                                { "source", w->source }, { "file", w->file }, { "value", w->value },
                                { "when", w->when },
                        };

                        fputs(i > 0 ? ",{" : "{", f);
                        json_members(f, m, ELEMENTSOF(m));
                        fprintf(f, ",\"line\":%u,\"certain\":%s}", w->line,
                                w->applies == APPLIES_YES ? "true" : "false");
                }
                fputc(']', f);
        }
        if (note) {
                fputs(",\"note\":", f);
                json_string(f, note);
        }
        fputs(",\"actions\":[", f);
        for (size_t i = 0; i < report->n_actions; i++) {
                const Action *a = &report->actions[i];
                const JsonMember m[] = {
                        { "key", a->key }, { "current", a->current }, { "desired", a->desired },
                        { "action", action_type_to_string(a->type) },
                        { "outcome", outcome_to_string(a->outcome) },
                        { "written", a->outcome == OUTCOME_WRITTEN ? a->write : NULL },
                        { "result", a->result }, { "reason", a->reason }, { "file", a->file },
                        { "also_written_by", a->others },
                };

                if (i > 0)
                        fputc(',', f);
                fputc('{', f);
                json_members(f, m, ELEMENTSOF(m));
                fprintf(f, ",\"line\":%u,\"rule\":", a->line);
                json_string(f, a->rule);
                if (a->error)
                        fprintf(f, ",\"errno\":%d", -a->error);
                fputc('}', f);
        }
        fputs("]}", f);
}
