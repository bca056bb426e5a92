/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include "attr.h"
#include "disk.h"

typedef enum MatchField {
        MATCH_NAME,
        MATCH_MODEL,
        MATCH_VENDOR,
        MATCH_SERIAL,
        MATCH_WWN,
        MATCH_TRANSPORT,
        MATCH_ROTATIONAL,
        MATCH_REMOVABLE,
        MATCH_ZONED,
        MATCH_QUEUES,
        MATCH_ROLE,             /* the stack role (stack.h's names) */
        MATCH_DM,               /* the dm uuid's kind: "mpath", "LVM", "CRYPT", ... */
        MATCH_PROPERTY,         /* match.property.NAME: a udev property */
        _MATCH_MAX,
} MatchField;

#define MATCH_KEY_PREFIX "match."
#define MATCH_PROPERTY_PREFIX "match.property."
#define MATCH_PROPERTY_NAME_MAX 64
#define MATCH_PATTERNS_MAX 64
#define MATCH_PATTERN_LEN_MAX 256
/* inih keeps 49 characters of a section ("rule " and the name): a longer one comes cut to 44
 * characters, one more than any valid name, so it is refused rather than taken cut. */
#define RULE_NAME_MAX 43

const char *match_field_to_string(MatchField f);        /* "name", "model", ... */
int match_field_from_string(const char *s);

typedef struct MatchLiteral {
        uint32_t hash;
        uint32_t index;         /* in Match.patterns */
} MatchLiteral;

typedef struct Match {
        MatchField field;
        bool negate;            /* the value started with "!" */
        char **patterns;        /* globs, transports, zoned models, "single"/"multi" */
        uint64_t literal;       /* bit i: patterns[i] has no wildcard (MATCH_PATTERNS_MAX 64) */
        MatchLiteral *literals; /* the literal patterns by hash (match_hash()), sorted */
        size_t n_literals;
        bool only_literals;     /* no pattern has a wildcard: no fnmatch() */
        int boolean;            /* rotational, removable */
        char *property;         /* MATCH_PROPERTY: the udev property's name ([A-Z0-9_]+) */
        unsigned line;
} Match;
_Static_assert(MATCH_PATTERNS_MAX <= 64, "Match.literal has one bit per pattern");

typedef struct Setting {
        const AttrInfo *attr;
        char *tunable;          /* ATTR_IOSCHED only */
        char *key;              /* "scheduler", "iosched.read_expire" */
        Value value;
        char *text;             /* canonical spelling of the value */
        unsigned line;
} Setting;

typedef struct Rule {
        char *name;
        char *file;
        unsigned line;          /* of the [rule NAME] header */
        bool hold;              /* a hold's (hold.h): asked for explicitly, never deferred */
        Match *matches;
        size_t n_matches;
        Setting *settings;
        size_t n_settings;
} Rule;

typedef struct Policy {
        Rule **rules;           /* in the order they apply: a later rule overrides */
        size_t n_rules;
        char **files;           /* every file read, in order */
        char **udev_keys;       /* the names of the match.property keys, sorted, each once */
} Policy;

Policy *policy_new(void);
Policy *policy_free(Policy *p);
DEFINE_TRIVIAL_CLEANUP_FUNC(Policy *, policy_free);
Rule *rule_new(const char *name, const char *file, unsigned line);
Rule *rule_free(Rule *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(Rule *, rule_free);
int policy_add_rule(Policy *p, Rule *r);        /* takes ownership, also on failure */

bool rule_name_is_valid(const char *name);

/**
 * match_parse() - parse the value of a match.* key
 * @field: which key
 * @text: "loop*|nbd*", "!usb", "yes", "single", ...
 * @ret: filled on success
 * @ret_error: a reason on -EINVAL (static string)
 *
 * Return: 0, -EINVAL or -ENOMEM.
 */
int match_parse(MatchField field, const char *text, Match *ret, const char **ret_error);
void match_done(Match *m);
/* A name for match.property.NAME: [A-Z0-9_], 1 to MATCH_PROPERTY_NAME_MAX characters. */
bool match_property_name_is_valid(const char *name);
bool match_test(const Match *m, const Disk *d);
bool rule_matches(const Rule *r, const Disk *d);

/**
 * rule_add_setting() - parse and add a setting to a rule
 * Return: 0; -ENOENT unknown key; -EEXIST key already set in this rule; -EINVAL/-ERANGE bad
 * value (with @ret_error); -ENOMEM.
 */
int rule_add_setting(Rule *r, const char *key, const char *value, unsigned line,
                     const char **ret_error);
int rule_add_match(Rule *r, const char *key, const char *value, unsigned line,
                   const char **ret_error);

/**
 * rule_check() - what is wrong within one rule whatever disk it meets and whatever other rules
 * say (iocost.min above iocost.max: the kernel refuses every such write)
 * @r: a rule with all its keys added
 * @ret_line: the line of the setting that makes it wrong, set on -EINVAL only
 * @ret_error: what is wrong (allocated), set on -EINVAL only
 *
 * Return: 0 if nothing is certainly wrong; -EINVAL; -ENOMEM.
 */
int rule_check(const Rule *r, unsigned *ret_line, char **ret_error);

typedef struct ResolvedSetting {
        const Setting *setting;
        const Rule *rule;
} ResolvedSetting;

typedef struct Resolved {
        ResolvedSetting *settings;      /* one per key, in attribute order */
        size_t n_settings;
        const Rule **rules;             /* every rule that matched, in order */
        size_t n_rules;
        /* iocost.solution: the hwdb solution it took, as two rules of their own (file "udev
         * hwdb IOCOST_QOS_<NAME>, via FILE", the line of iocost.solution) whose settings fill
         * the keys no rule set: explicit keys override the hwdb's. */
        char *iocost_solution;
        int iocost_solution_err;        /* -ENOENT no IOCOST_SOLUTIONS, -ENXIO properties missing,
                                         * -EINVAL a property that does not parse */
        Rule *hwdb_rules[2];            /* the io.cost.qos and the io.cost.model part */
} Resolved;

/**
 * policy_needs_udev() - whether a rule matches on what only udev knows for sure
 * @p: the policy
 *
 * Model, vendor, serial and WWN come from udev's properties (sysfs has other spellings or
 * none), and the transport of a SCSI-like disk from udev's ID_BUS. A policy without such
 * matches resolves the same for a disk whether udev has seen it or not: the daemon may act on
 * the kernel's uevent without waiting for udev's.
 *
 * The same for a udev property, and for the role multipath-path: a path added again is known
 * by multipath-tools' rules before the map holds it.
 *
 * Return: true when some rule matches on model, vendor, serial, wwn, transport, a udev
 * property or the role multipath-path.
 */
bool policy_needs_udev(const Policy *p);

/**
 * resolved_equal() - whether two resolutions show the same: each setting's key, value and
 * provenance, each matched rule's name and place
 * @a, @b: resolutions, NULL is empty
 *
 * Return: true when equal.
 */
bool resolved_equal(const Resolved *a, const Resolved *b);

/**
 * policy_resolve() - merge the settings of every rule that matches a disk
 * @p: the policy
 * @d: the disk
 * @ret: the settings, each with the rule (file:line) that set it last
 *
 * An iocost.solution is resolved here against the disk's hwdb properties (d->udev).
 *
 * Return: 0 or -ENOMEM.
 */
int policy_resolve(const Policy *p, const Disk *d, Resolved **ret);
Resolved *resolved_free(Resolved *r);
DEFINE_TRIVIAL_CLEANUP_FUNC(Resolved *, resolved_free);
const ResolvedSetting *resolved_find(const Resolved *r, AttrId id, const char *tunable);

/**
 * policy_disk_load() - what of a disk this policy can look at
 * @p: the policy
 * @ret: the identity fields its matches use and the attributes its rules set; udev_keys are
 *       @p's (the names of its match.property keys), borrowed
 */
void policy_disk_load(const Policy *p, DiskLoad *ret);
