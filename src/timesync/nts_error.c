/* SPDX-License-Identifier: LGPL-2.1-or-later */

/* Placeholder until the module is written. */
#include "nts.h"
