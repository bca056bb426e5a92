# SPDX-License-Identifier: LGPL-2.1-or-later
checks_run() {
	kernel_name=$1
	guest_start
	guest 'uname -r; lsblk -o NAME,SERIAL,TRAN,ROTA,SCHED,ZONED; systemd-analyze'
	guest_stop
}
