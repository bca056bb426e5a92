/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include <assert.h>

#include "ioschedd-polkit.h"
#include "log.h"
#include "util.h"

/*
 * The bus caps the replies a connection may await (dbus-daemon's max_replies_per_connection:
 * 128 on the system bus); past it, CheckAuthorization itself fails with LimitsExceeded, and a
 * burst of calls would be denied although polkit allows them. So at most POLKIT_INFLIGHT_MAX
 * checks are in flight, the others wait in order; and calls that ask the same question (the
 * same sender, action and interactivity) share one check.
 */
#define POLKIT_INFLIGHT_MAX 64

typedef struct Query Query;
struct Query {
        Query *next;                    /* in the registry */
        Query *next_waiting;            /* in the queue of checks not sent yet */
        PolkitRegistry *registry;
        sd_bus_message *call;
        char *action;
        char *sender;
        bool interactive;
        sd_bus_message *pk;             /* the CheckAuthorization call, until it is sent */
        sd_bus_slot *slot;
        Query *leader;                  /* another query asks polkit the same question */
        bool done;
        int result;                     /* 1 allowed, negative denied or failed */
        sd_bus_error error;
};

struct PolkitRegistry {
        Query *queries;
        Query *waiting_head, *waiting_tail;
        unsigned n_inflight;
};

static Query *query_free(Query *q) {
        if (!q)
                return NULL;
        if (q->slot && q->registry)
                q->registry->n_inflight--;
        sd_bus_slot_unref(q->slot);
        sd_bus_message_unref(q->pk);
        sd_bus_message_unref(q->call);
        sd_bus_error_free(&q->error);
        free(q->action);
        free(q->sender);
        free(q);
        return NULL;
}

static void registry_unlink(PolkitRegistry *reg, Query *q) {
        Query *prev = NULL;

        for (Query **p = &reg->queries; *p; p = &(*p)->next)
                if (*p == q) {
                        *p = q->next;
                        break;
                }
        for (Query *w = reg->waiting_head; w; prev = w, w = w->next_waiting)
                if (w == q) {
                        if (prev)
                                prev->next_waiting = w->next_waiting;
                        else
                                reg->waiting_head = w->next_waiting;
                        if (reg->waiting_tail == w)
                                reg->waiting_tail = prev;
                        break;
                }
        /* A query leaves the registry only once answered, and its followers with it
         * (query_answer()); none is left waiting for it. */
}

static int check_reply(Query *q, sd_bus_message *reply) {
        const sd_bus_error *e = sd_bus_message_get_error(reply);
        int authorized, challenge, r;

        if (e) {
                if (sd_bus_error_has_names(e, SD_BUS_ERROR_SERVICE_UNKNOWN, SD_BUS_ERROR_NAME_HAS_NO_OWNER,
                                           SD_BUS_ERROR_NO_REPLY, SD_BUS_ERROR_TIMEOUT)) {
                        log_info("polkit is not available (%s): denying %s to a non-root caller.",
                                 e->name, q->action);
                        sd_bus_error_setf(&q->error, SD_BUS_ERROR_ACCESS_DENIED,
                                          "Access denied: polkit is not available to authorize %s.",
                                          q->action);
                        return -EACCES;
                }
                log_warning("polkit failed to check %s: %s: %s", q->action, e->name, strna(e->message));
                sd_bus_error_setf(&q->error, SD_BUS_ERROR_ACCESS_DENIED,
                                  "Access denied: polkit could not check %s: %s", q->action,
                                  strna(e->message));
                return -EACCES;
        }

        r = sd_bus_message_enter_container(reply, 'r', "bba{ss}");
        if (r >= 0)
                r = sd_bus_message_read(reply, "bb", &authorized, &challenge);
        if (r < 0) {
                sd_bus_error_setf(&q->error, SD_BUS_ERROR_ACCESS_DENIED,
                                  "Access denied: unexpected answer from polkit.");
                return -EACCES;
        }
        if (authorized)
                return 1;
        if (challenge) {
                sd_bus_error_setf(&q->error, SD_BUS_ERROR_INTERACTIVE_AUTHORIZATION_REQUIRED,
                                  "Interactive authentication required for %s.", q->action);
                return -EACCES;
        }
        sd_bus_error_setf(&q->error, SD_BUS_ERROR_ACCESS_DENIED, "Access denied: %s is not authorized.",
                          q->action);
        return -EACCES;
}

/* Dispatch the method call again: the handler now finds the answer. */
static void query_redispatch(Query *q) {
        int r;

        q->done = true;
        r = sd_bus_message_rewind(q->call, true);
        if (r >= 0)
                r = sd_bus_enqueue_for_read(sd_bus_message_get_bus(q->call), q->call);
        if (r < 0) {
                log_error_errno(r, "Cannot dispatch a method call again after polkit answered: %m");
                (void) sd_bus_reply_method_errorf(q->call, SD_BUS_ERROR_FAILED,
                                                  "Cannot process the call after authorization.");
                registry_unlink(q->registry, q);
                query_free(q);
        }
}

/* q->result (and q->error) are set: answer q and the calls that asked the same question. */
static void query_answer(Query *q) {
        for (Query *f = q->registry->queries, *next; f; f = next) {
                next = f->next;
                if (f->leader != q)
                        continue;
                f->leader = NULL;
                f->result = q->result;
                if (sd_bus_error_is_set(&q->error))
                        (void) sd_bus_error_copy(&f->error, &q->error);
                query_redispatch(f);
        }
        query_redispatch(q);
}

static int on_polkit_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error);

static int query_send(Query *q) {
        PolkitRegistry *reg = q->registry;
        int r;

        /* No timeout of our own: an authentication agent may take its time asking. */
        r = sd_bus_call_async(sd_bus_message_get_bus(q->call), &q->slot, q->pk, on_polkit_reply, q,
                              UINT64_MAX);
        if (r < 0)
                return r;
        q->pk = sd_bus_message_unref(q->pk);
        reg->n_inflight++;
        return 0;
}

/* Send waiting checks while there is room; a check that cannot be sent is a denial. */
static void registry_send_waiting(PolkitRegistry *reg) {
        while (reg->waiting_head && reg->n_inflight < POLKIT_INFLIGHT_MAX) {
                Query *q = reg->waiting_head;
                int r;

                reg->waiting_head = q->next_waiting;
                if (!reg->waiting_head)
                        reg->waiting_tail = NULL;
                q->next_waiting = NULL;
                r = query_send(q);
                if (r < 0) {
                        log_warning_errno(r, "Cannot ask polkit about %s: %m", q->action);
                        sd_bus_error_setf(&q->error, SD_BUS_ERROR_ACCESS_DENIED,
                                          "Access denied: polkit could not be asked about %s.",
                                          q->action);
                        q->result = -EACCES;
                        query_answer(q);
                }
        }
}

static int on_polkit_reply(sd_bus_message *reply, void *userdata, sd_bus_error *ret_error) {
        Query *q = userdata;
        PolkitRegistry *reg = q->registry;

        q->slot = sd_bus_slot_unref(q->slot);
        reg->n_inflight--;
        q->result = check_reply(q, reply);
        query_answer(q);
        registry_send_waiting(reg);
        return 1;
}

/* Asked before for @call and @action: the answer is here, or pending (0). Return: 1 allowed,
 * -EACCES denied (@error says why), 0 pending; -ENOENT not asked. */
static int registry_answer(PolkitRegistry *reg, sd_bus_message *call, const char *action,
                           sd_bus_error *error) {
        Query *q;
        int r;

        for (q = reg ? reg->queries : NULL; q; q = q->next)
                if (q->call == call && streq(q->action, action))
                        break;
        if (!q)
                return -ENOENT;
        if (!q->done)
                return 0;
        r = q->result;
        if (r < 0)
                sd_bus_error_move(error, &q->error);
        registry_unlink(reg, q);
        query_free(q);
        return r < 0 ? -EACCES : 1;
}

/* Whether the sender of @call has effective uid 0: it needs no polkit. */
static int sender_is_root(sd_bus_message *call) {
        _cleanup_(sd_bus_creds_unrefp) sd_bus_creds *creds = NULL;
        uid_t uid;
        int r;

        r = sd_bus_query_sender_creds(call, SD_BUS_CREDS_EUID | SD_BUS_CREDS_AUGMENT, &creds);
        if (r >= 0)
                r = sd_bus_creds_get_euid(creds, &uid);
        return r < 0 ? r : uid == 0;
}

/* A query for @call's @action, with its CheckAuthorization call not sent yet. */
static int query_new(PolkitRegistry *reg, sd_bus_message *call, const char *sender, const char *action,
                     Query **ret) {
        Query *q;
        int r;

        q = calloc(1, sizeof(Query));
        if (!q)
                return -ENOMEM;
        q->registry = reg;
        q->call = sd_bus_message_ref(call);
        q->action = strdup(action);
        q->sender = strdup(sender);
        q->interactive = sd_bus_message_get_allow_interactive_authorization(call) > 0;
        r = q->action && q->sender ? 0 : -ENOMEM;
        if (r >= 0)
                r = sd_bus_message_new_method_call(sd_bus_message_get_bus(call), &q->pk,
                                                   "org.freedesktop.PolicyKit1",
                                                   "/org/freedesktop/PolicyKit1/Authority",
                                                   "org.freedesktop.PolicyKit1.Authority",
                                                   "CheckAuthorization");
        if (r >= 0)
                r = sd_bus_message_append(q->pk, "(sa{sv})sa{ss}us", "system-bus-name", 1, "name", "s",
                                          sender, action, 0, (uint32_t) q->interactive, "");
        if (r < 0) {
                query_free(q);
                return r;
        }
        *ret = q;
        return 0;
}

/* Into the registry: it waits for a query that asks the same and is not answered yet, or is
 * sent now, or waits for its turn. */
static int registry_add(PolkitRegistry *reg, Query *q) {
        int r;

        for (Query *o = reg->queries; o; o = o->next)
                if (!o->done && !o->leader && streq(o->sender, q->sender) && streq(o->action, q->action) &&
                    o->interactive == q->interactive) {
                        q->leader = o;
                        q->pk = sd_bus_message_unref(q->pk);
                        break;
                }
        if (!q->leader && reg->n_inflight < POLKIT_INFLIGHT_MAX) {
                r = query_send(q);
                if (r < 0)
                        return r;
        } else if (!q->leader) {
                if (reg->waiting_tail)
                        reg->waiting_tail->next_waiting = q;
                else
                        reg->waiting_head = q;
                reg->waiting_tail = q;
        }
        q->next = reg->queries;
        reg->queries = q;
        return 0;
}

int bus_verify_polkit_async(sd_bus_message *call, const char *action, PolkitRegistry **registry,
                            sd_bus_error *error) {
        const char *sender;
        Query *q;
        int r;

        assert(call && action && registry);
        r = registry_answer(*registry, call, action, error);
        if (r != -ENOENT)
                return r;
        r = sender_is_root(call);
        if (r != 0)
                return r;
        sender = sd_bus_message_get_sender(call);
        if (!sender)
                return -EBADMSG;
        if (!*registry) {
                *registry = calloc(1, sizeof(PolkitRegistry));
                if (!*registry)
                        return -ENOMEM;
        }
        r = query_new(*registry, call, sender, action, &q);
        if (r < 0)
                return r;
        r = registry_add(*registry, q);
        if (r < 0)
                query_free(q);
        return r;
}

PolkitRegistry *polkit_registry_free(PolkitRegistry *reg) {
        if (!reg)
                return NULL;
        while (reg->queries) {
                Query *q = reg->queries;
                reg->queries = q->next;
                q->registry = NULL;     /* the registry goes too: no counts to keep */
                query_free(q);
        }
        free(reg);
        return NULL;
}
