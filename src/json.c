/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "json.h"

/* The length of the well-formed UTF-8 sequence at @p, or 0 for a byte that starts none. */
static size_t utf8_sequence_len(const unsigned char *p) {
        unsigned len, cp;

        if (*p < 0x80)
                return 1;
        if (*p >= 0xc2 && *p <= 0xdf)
                len = 2, cp = *p & 0x1f;
        else if (*p >= 0xe0 && *p <= 0xef)
                len = 3, cp = *p & 0x0f;
        else if (*p >= 0xf0 && *p <= 0xf4)
                len = 4, cp = *p & 0x07;
        else
                return 0;
        for (unsigned i = 1; i < len; i++) {
                if ((p[i] & 0xc0) != 0x80)      /* also stops at the NUL */
                        return 0;
                cp = cp << 6 | (p[i] & 0x3f);
        }
        if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10ffff)) ||
            (cp >= 0xd800 && cp <= 0xdfff))
                return 0;       /* overlong, beyond Unicode, or a surrogate */
        return len;
}

void json_string(FILE *f, const char *s) {
        if (!s) {
                fputs("null", f);
                return;
        }
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
                switch (*p) {
                case '"':
                        fputs("\\\"", f);
                        break;
                case '\\':
                        fputs("\\\\", f);
                        break;
                case '\n':
                        fputs("\\n", f);
                        break;
                case '\t':
                        fputs("\\t", f);
                        break;
                default:
                        if (*p < 0x20 || *p == 0x7f)
                                fprintf(f, "\\u%04x", *p);
                        else if (*p < 0x80)
                                fputc(*p, f);
                        else {
                                /* Text from sysfs and devices is bytes; JSON is UTF-8. */
                                size_t n = utf8_sequence_len(p);

                                if (n == 0)
                                        fputs("\\ufffd", f);
                                else {
                                        fwrite(p, 1, n, f);
                                        p += n - 1;
                                }
                        }
                }
        }
        fputc('"', f);
}
