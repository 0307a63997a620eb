/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Journal MESSAGE_ID= values of the daemon's messages that an operator alerts on, explained in
 * catalog/timesyncd-nts.catalog (journalctl -x). The first is stock systemd-timesyncd's (systemd's
 * SD_MESSAGE_TIME_SYNC), so that a "journalctl MESSAGE_ID=" written for stock keeps working; the
 * others are ours (systemd-id128 new). Each comes with journal fields named below. Keep this
 * file and the catalog in step: test-journal-catalog checks that every ID here has an entry. */

/* The first synchronization since start. NTP_SERVER, NTS_AUTHENTICATED (yes/no). */
#define TIMESYNC_MESSAGE_TIME_SYNC "7c8a41f37b764941a0e1780b1be2f037"

/* An NTS key exchange failed for a reason other than the certificate. NTS_SERVER, NTS_ADDRESS,
 * NTS_ERROR. */
#define TIMESYNC_MESSAGE_NTS_KE_FAILED "a5beb081efe2414895e3f50fc4a39fb3"

/* An NTS key exchange failed on the server's certificate (untrusted issuer, expired, not yet
 * valid, wrong name). NTS_SERVER, NTS_ADDRESS, NTS_ERROR. */
#define TIMESYNC_MESSAGE_NTS_CERTIFICATE "deff9b7aa6a64be0b47875467ba3567e"

/* An NTS source disagrees with the majority of the others (a falseticker). For the log call in
 * timesyncd-policy.c; fields NTS_SERVER, OFFSET_SEC. */
#define TIMESYNC_MESSAGE_NTS_FALSETICKER "a72d0961bf5440eaae58709277412115"

/* A server refused service (kiss code DENY or RSTR) and is not asked again. NTP_SERVER,
 * KISS_CODE. */
#define TIMESYNC_MESSAGE_REPLY_REFUSED "b9010056e19b4848a7b0a6112db95c94"

/* No NTS server can be used: none configured under NTSRequired=yes (or an NTS-like unknown
 * key), NTS= names only invalid entries, every one refuses service, or every NTS server of the
 * list in use fails (key exchange, certificate, no reply, DNS): once per change. NTS_STATUS. */
#define TIMESYNC_MESSAGE_NO_NTS_SERVER "5e72c619ab4b479a8430df815d36cbd5"

/* An NTS server answers again after every one failed (the end of the above). NTP_SERVER. */
#define TIMESYNC_MESSAGE_NTS_BACK "5e3060687da54a5680cb2528380e6d55"

/* A reply failed NTS verification (forged, damaged, or for other keys): the first of its cause
 * from that server in 10 minutes. NTP_SERVER, NTP_ADDRESS, NTS_ERROR. */
#define TIMESYNC_MESSAGE_NTS_REPLY_REFUSED "3fdd8706cf1241f3a7af1d3d9ce53978"

/* A bootstrap: the clock took the time of a server whose certificate it could not check yet.
 * NTS_SERVER. */
#define TIMESYNC_MESSAGE_NTS_BOOTSTRAP "8963cc4f747740b4a5e210ce9826054c"

/* The clock was stepped after the first synchronization. For the log call of the step;
 * fields OFFSET_SEC. */
#define TIMESYNC_MESSAGE_CLOCK_STEPPED "dfc5460f1b20448380c0ccc024968a54"

/* Two NTS sources name one NTP address while their key-exchange addresses and certificate keys
 * differ (a conflict of claims, docs/ARCHITECTURE.md "One server, one vote"): neither is merged,
 * each keeps its vote. For the log call in timesyncd-policy-vote.c, once per conflict; fields
 * NTS_SERVER (the source listed later), NTS_OTHER_SERVER (the one it conflicts with),
 * NTP_ADDRESS (the IP address both name). */
#define TIMESYNC_MESSAGE_NTS_CONFLICT "f73e80273c7742088c94f74e68678363"
