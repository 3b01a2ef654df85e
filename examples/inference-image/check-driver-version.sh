#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# The image's entrypoint: prints the node's driver version and the image's
# CANN version, warns when CANN's list of compatible driver releases does not
# name the node's driver, then runs its arguments (the server).
#
# A warning only, never a failure: the check is best effort (the files it
# reads differ between releases), and a server that starts with a clear
# warning in its log is easier to diagnose than one that does not start.
#
# Reads $ASCEND_DRIVER_PATH/version.info (default /usr/local/Ascend/driver,
# mounted from the host by ascend-device-plugin into pods that request an NPU)
# and the toolkit's ascend_toolkit_install.info under $ASCEND_TOOLKIT_HOME
# (default /usr/local/Ascend/ascend-toolkit/latest) or /usr/local/Ascend/cann.
set -u

driver=${ASCEND_DRIVER_PATH:-/usr/local/Ascend/driver}
toolkit=${ASCEND_TOOLKIT_HOME:-/usr/local/Ascend/ascend-toolkit/latest}
say() { echo "check-driver-version: $*" >&2; }

# The value of the first "key=value" line of a file.
value() { # file key
	sed -n "s/^$2=//p" "$1" | head -n 1 | tr -d '\r'
}

drv_inner=
if [ -f "$driver/version.info" ]; then
	drv_version=$(value "$driver/version.info" Version)
	drv_inner=$(value "$driver/version.info" Innerversion)
	say "driver ${drv_version:-version unknown} (Innerversion ${drv_inner:-unknown}) from $driver/version.info"
else
	say "WARNING: no $driver/version.info: this pod got no NPU (resources.limits ascend.com/npu), or the driver is installed elsewhere (set ASCEND_DRIVER_PATH)"
fi

info=
for f in "$toolkit"/*-linux/ascend_toolkit_install.info /usr/local/Ascend/cann/*-linux/ascend_toolkit_install.info; do
	if [ -f "$f" ]; then
		info=$f
		break
	fi
done
if [ -z "$info" ]; then
	say "no ascend_toolkit_install.info under $toolkit: cannot tell the CANN version"
else
	cann_version=$(value "$info" version)
	compatible=$(value "$info" compatible_version)
	say "CANN ${cann_version:-version unknown} from $info"
	if [ -n "$drv_inner" ] && [ -n "$compatible" ]; then
		# Innerversion V100R001C15SPC006B220 is release V100R001C15.
		release=${drv_inner%%SPC*}
		release=${release%%B[0-9]*}
		case "$compatible" in
		*"[$release]"*) say "the driver's release $release is in CANN's compatible list" ;;
		*) say "WARNING: the driver's release $release is not in CANN's compatible list $compatible: expect unsupported operators or failures; use a CANN image that matches the driver (docs/troubleshooting.md)" ;;
		esac
	fi
fi

exec "$@"
