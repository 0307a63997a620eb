/* SPDX-License-Identifier: LGPL-2.1-or-later */
#pragma once

/* Intrusive doubly linked lists: an object is on a list through two pointers of its own,
 * named by the field prefix, so one object can be on several lists at once. */

#include "macro.h"

#define LIST_FIELDS(t, name) t *name##_next, *name##_prev

#define LIST_APPEND(name, head, item)                                                          \
        ({                                                                                     \
                typeof(*(head)) **_head = &(head), *_item = (item), *_tail = *_head;           \
                assert(_item);                                                                 \
                _item->name##_next = NULL;                                                     \
                if (!_tail) {                                                                  \
                        _item->name##_prev = NULL;                                             \
                        *_head = _item;                                                        \
                } else {                                                                       \
                        while (_tail->name##_next)                                             \
                                _tail = _tail->name##_next;                                    \
                        _tail->name##_next = _item;                                            \
                        _item->name##_prev = _tail;                                            \
                }                                                                              \
                _item;                                                                         \
        })

#define LIST_REMOVE(name, head, item)                                                          \
        ({                                                                                     \
                typeof(*(head)) **_head = &(head), *_item = (item);                            \
                assert(_item);                                                                 \
                if (_item->name##_next)                                                        \
                        _item->name##_next->name##_prev = _item->name##_prev;                  \
                if (_item->name##_prev)                                                        \
                        _item->name##_prev->name##_next = _item->name##_next;                  \
                else {                                                                         \
                        assert(*_head == _item);                                               \
                        *_head = _item->name##_next;                                           \
                }                                                                              \
                _item->name##_next = _item->name##_prev = NULL;                                \
                _item;                                                                         \
        })

#define LIST_FOREACH(name, i, head) for (typeof(*(head)) *i = (head); i; i = i->name##_next)

/* Safe against removal of i inside the loop body. */
#define LIST_FOREACH_SAFE(name, i, n, head)                                                    \
        for (typeof(*(head)) *n, *i = (head); i && ((n = i->name##_next), 1); i = n)

#define LIST_IS_EMPTY(head) (!(head))
