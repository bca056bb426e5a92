/* SPDX-License-Identifier: LGPL-2.1-or-later */
#include "json.h"
#include "util.h"

void json_string(FILE *f, const char *s) {
        if (!s) {
                fputs("null", f);
                return;
        }
        fputc('"', f);
        for (const unsigned char *p = (const unsigned char *) s; *p; p++) {
                switch (*p) {
                case '"':
                case '\\':
                        fputc('\\', f);
                        fputc(*p, f);
                        break;
                case '\n':
                case '\t':
                        fputs(*p == '\n' ? "\\n" : "\\t", f);
                        break;
                default:
                        if (*p < 0x20 || *p == 0x7f)
                                fprintf(f, "\\u%04x", *p);
                        else if (*p < 0x80)
                                fputc(*p, f);
                        else {
                                size_t n = utf8_char_len((const char *) p);

                                /* JSON is UTF-8: a byte that is none (a file name can be
                                 * anything) becomes U+FFFD. */
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

void json_members(FILE *f, const JsonMember *m, size_t n) {
        for (size_t i = 0; i < n; i++) {
                fprintf(f, "%s\"%s\":", i > 0 ? "," : "", m[i].name);
                json_string(f, m[i].value);
        }
}
