/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

#include <stdbool.h>
#include <sys/types.h>

/*
 * One engine per event. With both the udev rule and ioschedd installed, the daemon acts on
 * events while it runs and the rule's helper steps aside; the helper stays the engine in
 * early boot, in the initramfs and wherever the daemon is off. The daemon announces itself
 * with a marker that holds its PID: the unit's RuntimeDirectory, written once its udev
 * monitor receives (from then on it sees every event) and removed when it stops. A daemon
 * that crashed leaves the marker behind, so the helper checks that the PID still is an
 * ioschedd (/proc/PID/comm): two small reads.
 */
#define ENGINE_RUNTIME_DIR "/run/ioschedd"
#define ENGINE_MARKER "ioschedd.pid"
#define ENGINE_DAEMON_COMM "ioschedd"

/**
 * engine_marker_write() - announce that this process handles udev events now
 * @dir: the runtime directory (ENGINE_RUNTIME_DIR, or a test's own)
 *
 * Written to a temporary file and renamed, so that a reader sees the whole PID or nothing.
 *
 * Return: 0 or a negative errno.
 */
int engine_marker_write(const char *dir);

/**
 * engine_marker_remove() - take the announcement back (at exit)
 * @dir: the runtime directory
 *
 * Removes the marker only when it holds this process's PID.
 *
 * Return: 0 (also when there was none) or a negative errno.
 */
int engine_marker_remove(const char *dir);

/**
 * engine_daemon_pid() - the ioschedd that handles udev events, if one runs
 * @dir: the runtime directory
 *
 * Return: the daemon's PID; 0 when there is no marker, or its PID is no running ioschedd
 * (it crashed, or was killed); a negative errno when the marker cannot be read.
 */
pid_t engine_daemon_pid(const char *dir);
