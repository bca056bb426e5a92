/* SPDX-License-Identifier: LGPL-2.1-or-later */
/* The baseline for exec-to-exit timings: a statically linked program that does nothing,
 * linked the same way as iosched-apply. */
int main(void) {
        return 0;
}
