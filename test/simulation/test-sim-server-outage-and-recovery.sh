#!/usr/bin/env bash
# SPDX-License-Identifier: LGPL-2.1-or-later
# placeholder, replaced by the next commit
exit 77
