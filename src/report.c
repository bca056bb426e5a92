/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "json.h"
#include "log.h"
#include "report.h"
#include "util.h"

void report_summarize(const Plan *report, ReportSummary *ret) {
        *ret = (ReportSummary) {};
        for (size_t i = 0; report && i < report->n_actions; i++) {
                const Action *a = &report->actions[i];

                if (a->outcome == OUTCOME_WRITTEN)
                        ret->written++;
                else if (a->outcome == OUTCOME_GONE)
                        ret->gone = true;
                else if (a->outcome == OUTCOME_FAILED) {
                        ret->failed++;
                        if (!ret->first_failure)
                                ret->first_failure = a;
                }
        }
}

void report_log(const char *name, const Plan *report) {
        for (size_t i = 0; i < report->n_actions; i++) {
                const Action *a = &report->actions[i];

                if (a->outcome == OUTCOME_WRITTEN)
                        log_info("%s: %s %s -> %s (rule %s, %s:%u)", name, a->key, strna(a->current),
                                 strna(a->result ?: a->write), a->rule, a->file, a->line);
                else if (a->outcome == OUTCOME_FAILED)
                        log_warning("%s: %s: %s (rule %s, %s:%u)", name, a->key, strna(a->reason),
                                    a->rule, a->file, a->line);
                else if (a->outcome == OUTCOME_GONE)
                        log_debug("%s: went away while %s was being set.", name, a->key);
        }
}

const char *report_outcome_label(const Action *a) {
        switch (a->outcome) {
        case OUTCOME_WRITTEN:
                return "changed";
        case OUTCOME_SKIPPED:
                return "already right";
        case OUTCOME_PLANNED:
                return action_type_to_string(a->type);
        case OUTCOME_DRY_RUN:
                /* decided again after the switch: it may turn out right already */
                return a->after_switch ? "may-write" : "would-write";
        default:
                return outcome_to_string(a->outcome);
        }
}

void report_print_text(FILE *f, const Disk *d, const Plan *report, bool verbose) {
        if (d)
                fprintf(f, "%s (%s%s, scheduler %s)\n", report->disk,
                        transport_to_string(d->transport),
                        d->rotational == 1 ? ", rotational" : "", d->scheduler ?: "n/a");
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
                wo = MAX(wo, (int) strlen(report_outcome_label(a)));
        }
        fprintf(f, "  %-*s  %-*s  %-*s  %-*s  %s\n", wk, "KEY", wn, "CURRENT", wd, "DESIRED", wo,
                "RESULT", "WHY");
        for (size_t i = 0; i < report->n_actions; i++) {
                const Action *a = &report->actions[i];
                const char *now = a->outcome == OUTCOME_WRITTEN ? (a->result ?: a->write) : a->current;

                fprintf(f, "  %-*s  %-*s  %-*s  %-*s  %s", wk, a->key, wn, strna(now), wd,
                        a->desired, wo, report_outcome_label(a), strempty(a->reason));
                if (verbose)
                        fprintf(f, " [%s:%u rule %s]", a->file, a->line, a->rule);
                fputc('\n', f);
        }
        if (report_iocost_two_writers(d, report))
                fprintf(f, "  note: systemd's 90-iocost.rules also writes io.cost.qos and io.cost.model for "
                           "this disk, on every udev event (two writers); see iosched.conf(5)\n");
}

bool report_iocost_two_writers(const Disk *d, const Plan *report) {
        if (!d || !d->iocost_other_writer)
                return false;
        for (size_t i = 0; i < report->n_actions; i++) {
                AttrFile f = report->actions[i].attr->file;

                if (f == ATTR_FILE_IOCOST_QOS || f == ATTR_FILE_IOCOST_MODEL)
                        return true;
        }
        return false;
}

void report_print_json(FILE *f, const Disk *d, const Plan *report, const char *note) {
        fputs("{\"disk\":", f);
        json_string(f, report->disk);
        if (d) {
                fputs(",\"transport\":", f);
                json_string(f, transport_to_string(d->transport));
                fprintf(f, ",\"rotational\":%s,\"queues\":%u,\"scheduler\":",
                        d->rotational == 1 ? "true" : "false", d->nr_hw_queues);
                json_string(f, d->scheduler);
        }
        if (report_iocost_two_writers(d, report))
                fputs(",\"iocost_other_writer\":\"systemd 90-iocost.rules\"", f);
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
