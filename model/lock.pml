/* stamp (`npm run model -- --stamp` rewrites these lines; test/model-stamps.test.ts checks them):
 * follows src/scripts/lock/acquire.lua sha256:7db568c5d8c7473cfc95172fbe33256d4ec66650787579496583a82c17d09aae
 * follows src/scripts/lock/force-unlock.lua sha256:fcc9b8f6ee66d0afd9dfac45bbac4ff3f991ff6645459bc36959f32ceb676cee
 * follows src/scripts/lock/leave.lua sha256:460771a478a08df4f56788dda9bd4e834e5f23b8ea96d7fbdb6a345c5138215d
 * follows src/scripts/lock/reenter.lua sha256:db18a39ab0de1ca4e29c23273b4d9d0df005fdbd080c0e1de81658e5ab6a5e93
 * follows src/scripts/lock/release.lua sha256:acda856b8682619c5eb5cb9911a7cc503fd979d0983a129f148a05546a0ce3ad
 * follows src/scripts/lock/renew.lua sha256:3a4936575c28657162e5234ee44b888b7026c7ae319c63c546a7753dd2d8c577
 * follows src/scripts/lib/lock-hand-over.lua sha256:56a40991186824135e245145e7eddf9ab946fcc223ee4c52be9538cb52090b4c
 * follows src/scripts/lib/fence.lua sha256:d82dac4b3f56ecbb36cb0f371b1a060909c5129e8fc7705754ae6c2be45d1b65
 * follows src/scripts/fenced-lock/issue.lua sha256:683a09cbee3008777687abbaf5fba4ea5c3acb96c87dfffe85af151b388224f8
 * follows src/primitives/reentrant-lock.ts sha256:d9f596f3b4f4ebdbe8edd7b8015269a28e78d0d691ec1e4ab8c89b6093662f7f
 * follows src/engine/acquire.ts sha256:c2a2d3ffa5687ee7297cb81107d0274299fd11df7663a4e5b01161427ae5d44c
 * follows src/engine/key-lock.ts sha256:409c6ec7057ce37c1fcafcf54a4e3569a4022bdbca4837ce85b2c0483b0d44fe
 */

/*
 * The lock's Redis protocol (Lock, FairLock, FencedLock: one hash, a queue of places, hand-over by
 * message) with NC clients, checked by spin. See docs/model.md for what is modelled, what is
 * abstracted away and how to read a trail.
 *
 * Each Lua script is one d_step (Redis runs a script atomically); the comment above it names the
 * script and the lines it follows. Each client is a process whose steps follow the acquisition
 * pipeline (src/engine/acquire.ts, src/primitives/reentrant-lock.ts) and the holder's side
 * (src/engine/key-lock.ts). Time is a discrete clock: every timer is kept as what is left of it
 * (or, for a send time, as its age), so one `tick` moves them all and runs are unbounded with a
 * finite state space.
 *
 * Switches (spin -D...):
 *   REENTER   a holder re-enters once (lock/reenter) and releases twice
 *   FENCE     grants draw fencing tokens (lib/fence, fenced-lock/issue); a resource checks them
 *   FORCE     an admin process force-unlocks once, and sends that call twice (lock/force-unlock)
 *   RESTART   the server restarts once without persistence, losing every key
 *   CRASH     one client may die (stop for good) while it waits or holds
 *   LOSSES=n  at most n script calls lose their request or reply (default: unbounded); the
 *             liveness check bounds them (Redis that never answers grants nothing)
 *   LIVENESS  no assertion on beliefs after a restart etc.; used with the ltl claim `strand`
 *   NO_BELIEF_CHECK  leave out the belief assertion (a restart breaks it by nature)
 *   ACQS=n    each client makes at most n acquisitions (bounds the runs with three clients)
 * Known-bad variants (each must be caught):
 *   BAD_TRUST_HANDOVER  a hand-over message is taken as a grant from the moment it arrives,
 *                       without the validity check of reentrant-lock.ts attempt()
 *   BAD_NO_MARKER       release.lua deletes the lock instead of renaming it to its marker
 *   BAD_NO_LAPSE        a place in the queue never lapses (acquire.lua 57, lock-hand-over.lua 25)
 */

#ifndef NC
#define NC 3
#endif
#define NO (2 * NC)   /* owners: client c's acquisitions alternate between owners 2c and 2c+1 */
#define MS 1          /* hand-over messages in flight per client channel (see publish) */
#ifndef L
#define L 2           /* the lease (watchdogTimeout, or leaseTime), in ticks */
#endif
#ifndef W
#define W 2           /* fairWaiterTimeout: a place lapses W ticks after it was written */
#endif
#define R (L < W -> L : W)   /* a waiter's reservation: min(lease, fairWaiterTimeout) */
#define RW 1          /* a last release is re-sent for RW ticks after it was first sent */
#define AGECAP L      /* ages stop counting here: a send as old as the lease proves nothing */
#define TCAP 1        /* a ticket's age stops here: one tick old, half the reservation (R = 2) is gone */
#define FMK 1         /* force-unlock's marker TTL (2 * commandTimeout) */
#define NOTTL 255     /* a key without expiry */
#define NIL 255       /* a script's nil reply, release's -1 */
#ifdef FENCE
/* Tokens grow without end: a run is followed while fewer than 3 were drawn (new attempts stop). */
#define ROUNDS_OK (ctr < 3)
#else
#define ROUNDS_OK true
#endif
#ifdef ACQS
/* Each client makes at most ACQS acquisitions (lock() calls): runs are followed that far. */
#define ACQS_OK (nacq < ACQS)
#define COUNT_ACQ nacq++
#else
#define ACQS_OK true
#define COUNT_ACQ skip
#endif
#ifdef LOSSES
#define CANLOSE (losses < LOSSES)
#define LOST losses++
#else
#define CANLOSE true
#define LOST skip
#endif

/* ---- Redis ---- */
byte cnt[NO];      /* lock hash: owner field -> hold count */
bit queued;        /* lock hash: field "queued" */
byte tok;          /* lock hash: field "token" (0: none) */
byte lttl;         /* lock hash TTL: 0 no key, NOTTL no expiry */
byte q[NO];        /* <lock>:queue, owners in request order */
byte qn;
bit hw[NO];        /* <lock>:waiters has a place of the owner */
byte pl[NO];       /* ... which lapses in pl ticks (0: lapsed, still there until dropped) */
byte pt[NO];       /* ... whose ticket names an attempt sent pt ticks ago */
byte qttl;         /* TTL of <lock>:queue and <lock>:waiters (the same, see acquire.lua 92-96) */
byte mk[NO];       /* TTL of <lock>:released:<owner>:<hold> (0: none) */
byte fmk;          /* TTL of <lock>:released:force:<call id> */
byte fage;         /* age of the force-unlock call (its repeats come within commandTimeout) */
byte ctr;          /* the fence counter: data, no TTL (docs/guarantees.md, 4) */

/* ---- pub/sub: hand-over messages "=<wait id>|<ticket>" on each client's channel ---- */
byte mo[NC * MS];  /* the owner (wait id) a message names, + 1; 0: free slot */
byte ma[NC * MS];  /* the age of the attempt its ticket names */

/* ---- clients, as the clock and the checks see them ---- */
byte co[NC];       /* the owner of the client's current acquisition */
bit joined[NC];    /* its wait is subscribed: a message for co[c] is delivered */
byte mb[NC];       /* a delivered message not yet taken (Waiter.#message): ticket age + 1 */
byte sa[NC];       /* age of the client's call in flight (from its first send) */
bit hold[NC];      /* in its critical section: lock() resolved, unlock() not yet called */
byte v[NC];        /* validity left: what Liveness.validUntil proves (0: its signal aborted) */
bit forced[NC];    /* ghost: its hold was deleted behind it (force-unlock, restart) */
byte ktok[NC];     /* its fencing token */
byte rmax;         /* the resource: highest token seen */
byte losses;       /* calls whose request or reply was lost so far */
bit dead[NC];
bit crashed;
bit restarted;
bit waiting[NC];   /* in lock(), alive: for the ltl claim */

#define FREE (lttl == 0)

/* A place that has not lapsed (acquire.lua 57, lock-hand-over.lua 25); the bad variant's never do. */
#ifdef BAD_NO_LAPSE
#define PLACE_LIVE(x) (hw[x])
#else
#define PLACE_LIVE(x) (hw[x] && pl[x] > 0)
#endif

inline lpop() {
  i = 0;
  do
  :: i + 1 < qn -> q[i] = q[i + 1]; i++
  :: else -> break
  od;
  qn--;
  q[qn] = 0;
  i = 0
}

inline lrem(x) {
  j = 0;
  do
  :: j < qn && q[j] == x ->
     i = j;
     do
     :: i + 1 < qn -> q[i] = q[i + 1]; i++
     :: else -> break
     od;
     qn--;
     q[qn] = 0
  :: j < qn && q[j] != x -> j++
  :: else -> break
  od;
  i = 0;
  j = 0
}

inline clearHash() {
  for (i : 0 .. NO - 1) { cnt[i] = 0 }
  i = 0;
  queued = 0;
  tok = 0;
  lttl = 0
}

/* A list or hash that lost its last member is no key any more. */
inline normalize() {
  if
  :: qn == 0 -> qttl = 0
  :: else
  fi;
  for (i : 0 .. NO - 1) {
    if
    :: !hw[i] -> pl[i] = 0; pt[i] = 0
    :: else
    fi
  }
  i = 0
}

/* lib/fence.lua issueToken(), lines 8-21 */
inline issueToken() {
#ifdef FENCE
  if
  :: tok == 0 -> ctr++; tok = ctr
  :: else
  fi;
  rtok = tok
#else
  skip
#endif
}

/* A message on the client channel of owner x (lock-hand-over.lua 32-33). One message per client
 * is in flight at a time: a newer one takes the place of one still on its way (which is lost). */
inline publish(x) {
  mo[x / 2] = x + 1;
  ma[x / 2] = pt[x]
}

/* lib/lock-hand-over.lua handOver(), lines 12-37. The hash was just deleted or found free. */
inline handOver() {
  do
  :: qn == 0 -> break                                         /* 16-17 */
  :: qn > 0 ->
     h = q[0];
     lpop();                                                  /* 16 */
     live = PLACE_LIVE(h);                                    /* 22-25: its place has not lapsed */
     hw[h] = 0;                                               /* 24 */
     if
     :: live ->
        cnt[h] = 1;                                           /* 26-30 */
        queued = (qn > 0);
        lttl = R;                                             /* 31: pexpire(reserve) */
        publish(h);                                           /* 32-33 */
        break                                                 /* 34 */
     :: else
     fi
  od;
  h = 0;
  live = 0
}

/* lock/acquire.lua (the standalone form of lib/settled-slot). qf: queue (ARGV[3..6] given);
 * the ticket is the call itself: its age sa[c]. rep: 0 granted, 1 not. */
inline s_acquire() {
  if
  :: lttl == 0 && qttl == 0 ->                                /* 32: no lock, no waiter */
     cnt[o] = 1; lttl = L; issueToken(); rep = 0              /* 33-35 */
  :: else ->
     if
     :: cnt[o] > 0 -> lttl = L; issueToken(); rep = 0         /* 37-40: a repeat, or handed over */
     :: else ->
        held = (lttl > 0);                                    /* 51 */
        rep = 1;
        if
        :: !held ->
           do                                                 /* 54-60: drop lapsed heads */
           :: qn > 0 && q[0] != o && !PLACE_LIVE(q[0]) -> hw[q[0]] = 0; lpop()
           :: else -> break
           od;
           if
           :: qn == 0 || q[0] == o ->                         /* 61-74 */
              if
              :: qn > 0 -> lpop()
              :: else
              fi;
              hw[o] = 0;
              cnt[o] = 1;
              queued = (qn > 0);
              lttl = L;
              issueToken();
              rep = 0
           :: else
           fi
        :: else
        fi;
        if
        :: rep == 1 ->                                        /* 77-97 */
           if
           :: !hw[o] -> q[qn] = o; qn++                       /* 80-84: a new place queues */
           :: else                                            /* a refresh keeps its place */
           fi;
           hw[o] = 1; pl[o] = W; pt[o] = sa[c];               /* 85-86 */
           if
           :: held -> queued = 1                              /* 88-90 */
           :: else
           fi;
           qttl = W                                           /* 92-96 */
        :: else
        fi
     fi
  fi;
  held = 0;
  normalize()
}

/* lock/release.lua, lines 21-46. ka: ARGV[2] (holds as the caller knows them); m3: ARGV[3]
 * (0: "", the lease the lock has left will do). */
inline s_release() {
  if
  :: cnt[o] == 0 ->                                           /* 24-32 */
     if
     :: lttl == 0 -> handOver()                               /* 25-27 */
     :: else
     fi;
     if
     :: mk[o] > 0 -> rep = 0                                  /* 28-30 */
     :: else -> rep = NIL                                     /* 31 */
     fi
  :: cnt[o] > 0 && cnt[o] < ka -> rep = cnt[o]                /* 33-35 */
  :: cnt[o] >= ka && cnt[o] > 1 -> cnt[o]--; rep = cnt[o]     /* 36-38 */
  :: cnt[o] >= ka && cnt[o] == 1 ->                           /* 39-46 */
#ifndef BAD_NO_MARKER
     mk[o] = lttl;                                            /* 39: rename keeps the TTL */
     if
     :: m3 > 0 -> mk[o] = m3                                  /* 40-42 */
     :: else
     fi;
#endif
     live = queued;
     clearHash();
     if
     :: live -> handOver()                                    /* 43-45 */
     :: else
     fi;
     rep = 0
  fi;
  live = 0
}

/* lock/leave.lua, lines 12-23 */
inline s_leave() {
  if
  :: hw[o] -> hw[o] = 0; lrem(o)                              /* 12-14 */
  :: else
  fi;
  if
  :: cnt[o] == 0 ->                                           /* 15-20 */
     if
     :: lttl == 0 -> handOver()
     :: else
     fi;
     rep = 0
  :: else -> clearHash(); handOver(); rep = 1                 /* 21-23 */
  fi;
  normalize()
}

/* lock/reenter.lua, lines 11-21 */
inline s_reenter() {
  if
  :: cnt[o] == 0 -> rep = NIL                                 /* 12-14 */
  :: else ->
     if
     :: cnt[o] <= ka -> cnt[o]++                              /* 15-17 */
     :: else
     fi;
     if
     :: lttl == NOTTL || lttl < L -> lttl = L                 /* 18-20 */
     :: else
     fi;
     rep = 1
  fi
}

/* lock/renew.lua, lines 15-26, for one lock */
inline s_renew() {
  if
  :: cnt[o] > 0 -> lttl = L; rep = 1
  :: else -> rep = 0
  fi
}

/* fenced-lock/issue.lua, lines 12-15 */
inline s_issue() {
  if
  :: cnt[o] == 0 -> rep = NIL
  :: else -> issueToken(); rep = 0
  fi
}

/* The checks that hold in every state (run at the end of every atomic step). */
inline invariants() {
  j = 0;
  for (i : 0 .. NO - 1) {
    if
    :: cnt[i] > 0 -> j++
    :: else
    fi;
    /* the queue and the waiters hash hold the same owners */
    assert(!hw[i] || qn > 0)
  }
  /* mutual exclusion in Redis: one owner field at most */
  assert(j <= 1);
  /* nothing without expiry but the data keys (docs/guarantees.md, 3.12) */
  assert(lttl != NOTTL && qttl != NOTTL);
  for (i : 0 .. NO - 1) { assert(mk[i] != NOTTL) }
  /* the hash exists exactly while someone holds it */
  assert((lttl > 0) == (j == 1));
#ifndef NO_BELIEF_CHECK
  /* a client believes it holds only while Redis says it does, unless its hold was deleted behind
   * it (then only until its validity runs out, which is all the contract promises) */
  for (i : 0 .. NC - 1) {
    assert(!(hold[i] && v[i] > 0 && !forced[i]) || cnt[co[i]] > 0)
  }
#endif
  i = 0;
  j = 0
}

/* One tick of the discrete clock: every TTL and validity runs down, every age grows. */
proctype clock() {
  byte i, j;
end_clock:
  do
  :: d_step {
       if
       :: lttl > 0 && lttl != NOTTL ->
          lttl--;
          if
          :: lttl == 0 -> clearHash()                         /* the lease ran out */
          :: else
          fi
       :: else
       fi;
       if
       :: qttl > 0 && qttl != NOTTL ->
          qttl--;
          if
          :: qttl == 0 ->
             for (i : 0 .. NO - 1) { q[i] = 0; hw[i] = 0 }
             qn = 0
          :: else
          fi
       :: else
       fi;
       for (i : 0 .. NO - 1) {
         if :: pl[i] > 0 -> pl[i]-- :: else fi;
         if :: hw[i] && pt[i] < TCAP -> pt[i]++ :: else fi;
         if :: !hw[i] -> pl[i] = 0; pt[i] = 0 :: else fi;
         if :: mk[i] > 0 && mk[i] != NOTTL -> mk[i]-- :: else fi
       }
       if :: fmk > 0 -> fmk-- :: else fi;
       if :: fage < 1 -> fage++ :: else fi;
       for (i : 0 .. NC * MS - 1) {
         if :: mo[i] > 0 && ma[i] < TCAP -> ma[i]++ :: else fi
       }
       for (i : 0 .. NC - 1) {
         if :: v[i] > 0 -> v[i]-- :: else fi;
         if :: sa[i] < AGECAP -> sa[i]++ :: else fi;
         if :: mb[i] > 0 && mb[i] <= TCAP -> mb[i]++ :: else fi
       }
       invariants()
     }
  od
}

/* Pub/sub: any message is delivered, lost, or delivered and kept to be delivered again (a
 * duplicate), at any time: after any number of later events. A message for a wait that ended finds
 * no waiter and is dropped (waiters.ts Channel.message: only the waiter whose id matches gets it);
 * such messages are dropped at once when the wait ends (purge), which is the same. */
inline deliver(s) {
  if
  :: joined[s] && mo[s] == co[s] + 1 -> mb[s] = ma[s] + 1
  :: else
  fi
}

proctype net() {
end_net:
  do
  :: d_step { mo[0] > 0 -> deliver(0); mo[0] = 0; ma[0] = 0 }
  :: d_step { mo[1] > 0 -> deliver(1); mo[1] = 0; ma[1] = 0 }
  :: d_step { mo[0] > 0 -> mo[0] = 0; ma[0] = 0 }
  :: d_step { mo[1] > 0 -> mo[1] = 0; ma[1] = 0 }
  :: d_step { mo[0] > 0 -> deliver(0) }
  :: d_step { mo[1] > 0 -> deliver(1) }
#if NC > 2
  :: d_step { mo[2] > 0 -> deliver(2); mo[2] = 0; ma[2] = 0 }
  :: d_step { mo[2] > 0 -> mo[2] = 0; ma[2] = 0 }
  :: d_step { mo[2] > 0 -> deliver(2) }
#endif
  od
}

/*
 * A call: sent (its age sa[c] set to 0 by the step that sends it), then Redis runs it, then its
 * reply comes back or is lost. (A request lost before it ran is a delayed one, or one whose sender
 * gave up: both are runs of this model.) RPC(x, script) makes the labels x_rpc
 * (send, or send again: the age keeps counting from the first send, as `sentAt` does), and jumps
 * to x_replied or x_lost. nrun counts the runs (at most 2 matter), first is the first run's reply.
 */
#define RPC(x, script) \
x##_rpc: \
  if \
  :: d_step { script; normalize(); invariants() }; goto x##_replied \
  :: CANLOSE -> d_step { script; LOST; normalize(); invariants() }; goto x##_lost \
  fi

#define RAN \
  if \
  :: nrun == 0 -> first = rep \
  :: else \
  fi; \
  if \
  :: nrun < 2 -> nrun++ \
  :: else \
  fi

/* The call's outcome has been dealt with: nothing of it is kept. */
#define FORGET sa[c] = AGECAP; rep = 0; first = 0; nrun = 0; rtok = 0; ka = 0; m3 = 0

/* lock() resolves: the critical section starts */
/* The wait is over: messages for it find no waiter. */
inline purge() {
  joined[c] = 0;
  mb[c] = 0;
  mo[c] = 0;
  ma[c] = 0
}

inline grant() {
  k = 1;
  hold[c] = 1;
  purge();
  waiting[c] = 0;
  lostHold = 0;
  a = 0;
  FORGET;
  invariants()
}

/*
 * One client. Its steps follow the pipeline's decisions (acquire.ts pipeline(), reentrant-lock.ts
 * LockAcquisition.attempt(), key-lock.ts #release / #reenter, watchdog.ts). A lost reply is
 * followed by the same call sent again (ioredis after a reconnect, runUntilKnown) or by what the
 * code does when a call fails.
 */
proctype client(byte c) {
  byte o, g, k, rep, rtok, ka, m3, i, j, h, a, nrun, first;
#ifdef ACQS
  byte nacq;
#endif
  bit live, held, fin, lostHold;

idle:
  /* A new lock(): a new owner (docs/guarantees.md, 2.1). Its owner id alternates between two; it
   * is taken only once nothing of it is left in Redis from two acquisitions ago (see docs). The
   * wait subscribes and queues from its first attempt (a client that still listens on the lock's
   * channel; the uncontended one-shot try is the same script without queueing, see docs). */
  atomic {
    cnt[2 * c + 1 - g] == 0 && !hw[2 * c + 1 - g] && ROUNDS_OK && ACQS_OK ->
    COUNT_ACQ;
    g = 1 - g;
    o = 2 * c + g;
    co[c] = o;
    mk[o] = 0;           /* a marker of an owner two acquisitions ago: no script reads it again */
    mb[c] = 0;
    forced[c] = 0;
    k = 0;
    waiting[c] = 1;
    joined[c] = 1;
    sa[c] = 0
  };

  /* ---- the acquisition: lock/acquire.lua, queueing (ARGV[3..6]) ---- */
  RPC(acq, s_acquire(); assert(cnt[o] <= 1));   /* a repeat holds it once */

acq_replied:
  atomic {
    if
    /* #granted: a reply after the lease it set ran out grants nothing (3.9) */
    :: rep == 0 && L > sa[c] -> v[c] = L - sa[c]; ktok[c] = rtok; grant(); goto holding
    :: else -> FORGET; goto park
    fi
  };

acq_lost:
  if
  :: goto acq_rpc                                    /* the same attempt sent again */
  :: atomic { FORGET; goto park }                   /* a failed attempt: the wait tries again */
  :: atomic { FORGET; sa[c] = 0; purge(); goto leave_rpc }  /* failed for failFor */
  fi;

park:
  /* Waiter.park(): until a message, the timer (the holder's lease end or the refresh period), or
   * the deadline / an abort */
  if
  :: atomic {
       mb[c] > 0 && ROUNDS_OK ->
       a = mb[c] - 1;
       mb[c] = 0;
#ifdef BAD_TRUST_HANDOVER
       /* trusted as if the reservation had just started */
       v[c] = R;
       goto handed;
#else
       /* attempt(): trusted only while at least half the reservation is proven, counted from
        * the send time of the attempt whose ticket the message names */
       if
       :: 2 * (R - a) > R -> v[c] = R - a; goto handed
       :: else -> a = 0; sa[c] = 0; goto acq_rpc
       fi
#endif
     }
  :: atomic { ROUNDS_OK -> sa[c] = 0; goto acq_rpc }   /* the timer: look again */
  :: atomic { sa[c] = 0; purge(); goto leave_rpc }   /* deadline or abort */
#ifdef CRASH
  :: atomic { !crashed -> crashed = 1; goto die }
#endif
  fi;

handed:
#ifdef FENCE
  /* #withToken: a FencedLock's token is drawn in one round trip, which proves the hold too */
  atomic { a = 0; sa[c] = 0; goto issue_rpc };
  RPC(issue, s_issue());
issue_replied:
  atomic {
    if
    :: rep == NIL -> v[c] = 0; FORGET; goto park    /* lost in between: try again */
    :: else -> ktok[c] = rtok; grant(); goto holding
    fi
  };
issue_lost:
  if
  :: goto issue_rpc
  :: atomic { v[c] = 0; FORGET; goto park }
  fi;
#else
  atomic { grant(); goto holding };
#endif

holding:
  if
  :: atomic {
       v[c] > 0 && !lostHold ->
       /* the watchdog renews (a third of the way through the lease; here at any time) */
       sa[c] = 0; goto renew_rpc
     }
#ifdef REENTER
  :: atomic { v[c] > 0 && !lostHold && k == 1 -> sa[c] = 0; ka = k; goto reenter_rpc }
#endif
#ifdef FENCE
  :: d_step {
       v[c] > 0 && !lostHold ->
       /* a write to the fenced resource, which refuses a token lower than the highest it has
        * seen: a holder Redis still holds for is never refused (tokens follow the order of holds) */
       assert(forced[c] || restarted || ktok[c] >= rmax);
       if
       :: ktok[c] >= rmax -> rmax = ktok[c]
       :: else
       fi
     }
#endif
  :: atomic {
       k > 1 && v[c] > 0 && !lostHold ->
       /* a release that leaves holds: retried while they are proven */
       sa[c] = 0; ka = k; m3 = 0; fin = 0; goto rel_rpc
     }
  :: atomic {
       !(k > 1 && v[c] > 0 && !lostHold) ->
       /* the last release: out of the critical section before the call goes */
       hold[c] = 0;
       fin = 1;
       ka = k;
       /* markerTtl(): "" when the lease left covers the retry window, else the window */
       if
       :: v[c] >= RW && !lostHold -> m3 = 0
       :: else -> m3 = RW
       fi;
       sa[c] = 0;
       goto rel_rpc
     }
#ifdef CRASH
  :: atomic { !crashed -> crashed = 1; goto die }
#endif
  fi;
  goto holding;

  /* ---- the watchdog's renewal: lock/renew.lua ---- */
  RPC(renew, s_renew());
renew_replied:
  atomic {
    if
    :: rep == 1 && L > sa[c] && L - sa[c] > v[c] -> v[c] = L - sa[c]   /* confirm(provenUntil(sentAt)) */
    :: rep == 1 && !(L > sa[c] && L - sa[c] > v[c]) -> skip
    :: rep == 0 -> v[c] = 0; lostHold = 1                               /* found gone: lost */
    fi;
    FORGET;
    goto holding
  };
renew_lost:
  atomic { FORGET; goto holding };                  /* tried again next round; validity runs down */

#ifdef REENTER
  /* ---- a nested acquisition: lock/reenter.lua ---- */
  RPC(reenter, s_reenter(); RAN; assert(!(nrun > 0 && first != NIL) || cnt[o] <= k + 1));  /* adds one hold */
reenter_replied:
  atomic {
    if
    :: rep == NIL -> v[c] = 0; lostHold = 1                             /* gone when re-entered */
    :: rep != NIL ->
       k++;
       if
       :: L > sa[c] && L - sa[c] > v[c] -> v[c] = L - sa[c]
       :: else
       fi
    fi;
    FORGET;
    goto holding
  };
reenter_lost:
  /* unknown whether it counted: #settleInBackground releases with holds k + 1 */
  atomic { FORGET; sa[c] = 0; ka = k + 1; m3 = RW; goto settle_rpc };
  RPC(settle, s_release());
settle_replied:
  atomic {
    /* the count is back to k whether or not the re-entry ran */
    assert(forced[c] || restarted || rep == k || rep == NIL);
    if
    :: rep == NIL -> v[c] = 0; lostHold = 1
    :: else
    fi;
    FORGET;
    goto holding
  };
settle_lost:
  if
  :: goto settle_rpc
  :: atomic { v[c] = 0; lostHold = 1; FORGET; goto holding }   /* could not be confirmed: lost */
  fi;
#endif

  /* ---- unlock(): lock/release.lua ---- */
  RPC(rel, s_release(); RAN);
rel_replied:
  atomic {
    if
    :: fin && sa[c] < RW ->
       /* heard before `until`: unlock() never says "not held" about a release that happened
        * (docs/guarantees.md, 3.2) */
       assert(restarted || !(nrun == 2 && first == 0) || rep == 0);
       goto released
    :: fin && sa[c] >= RW -> goto released   /* cut at `until`: never learned, left to its lease */
    :: !fin && rep == NIL -> v[c] = 0; lostHold = 1; FORGET; goto holding   /* not held: lost */
    :: !fin && rep != NIL ->
       /* hold counts exact: the answer is what one run does */
       assert(forced[c] || restarted || rep == k - 1 || v[c] == 0);
       k = rep;
       FORGET;
       goto holding
    fi
  };
rel_lost:
  if
  :: fin && sa[c] < RW -> goto rel_rpc                    /* runUntilKnown until `until` */
  :: !fin && (v[c] > 0 || sa[c] < RW) -> goto rel_rpc
  :: fin -> goto released                                 /* never learned: expires with its lease */
  :: atomic { !fin -> v[c] = 0; lostHold = 1; FORGET; goto holding }   /* liveness.lose() */
  fi;

released:
  atomic {
    hold[c] = 0;
    v[c] = 0;
    mk[o] = 0;           /* no call of this owner reads its marker again (it expires by itself) */
    k = 0;
    fin = 0;
    lostHold = 0;
    ktok[c] = 0;
    FORGET;
    goto idle
  };

  /* ---- the wait ends without the lock: giveUp() sends lock/leave.lua ---- */
  RPC(leave, s_leave());
leave_replied:
  goto acquired_not;
leave_lost:
  if
  :: goto leave_rpc
  :: goto acquired_not                  /* not awaited when unreachable: the place lapses */
  fi;

acquired_not:
  atomic {
    waiting[c] = 0;
    v[c] = 0;
    FORGET;
    goto idle
  };

die:
  atomic {
    dead[c] = 1;
    hold[c] = 0;
    purge();
    waiting[c] = 0;
    v[c] = 0;
    FORGET
  };
end_dead:
  false
}

#ifdef FORCE
/* lock/force-unlock.lua, lines 11-20, sent once and then once more (its reply lost). */
proctype admin() {
  byte i, j, h, rep, first;
  bit live;
  d_step {
    if
    :: fmk > 0 -> rep = 1                                     /* 12-14 */
    :: fmk == 0 && lttl == 0 -> rep = 0                        /* 15-17 */
    :: else ->
       for (i : 0 .. NC - 1) {
         if :: cnt[co[i]] > 0 -> forced[i] = 1 :: else fi
       }
       clearHash(); fmk = FMK; handOver(); rep = 1           /* 15, 18-19 */
    fi;
    first = rep;
    fage = 0;
    invariants()
  };
  /* sent again within commandTimeout (runUntilKnown); its marker is kept twice as long */
  d_step {
    fage < 1 ->
    if
    :: fmk > 0 -> rep = 1
    :: fmk == 0 && lttl == 0 -> rep = 0
    :: else ->
       for (i : 0 .. NC - 1) {
         if :: cnt[co[i]] > 0 -> forced[i] = 1 :: else fi
       }
       clearHash(); fmk = FMK; handOver(); rep = 1
    fi;
    /* the repeat answers what the first run did, or a lock deleted anew in between */
    assert(first == 0 || rep == 1);
    invariants()
  }
}
#endif

#ifdef RESTART
/* A standalone server restarts without persistence: every key is gone (docs/guarantees.md, 5). */
proctype restart() {
  byte i, j;
  d_step {
    clearHash();
    for (i : 0 .. NO - 1) { q[i] = 0; hw[i] = 0; pl[i] = 0; pt[i] = 0; mk[i] = 0 }
    qn = 0; qttl = 0; fmk = 0;
    ctr = 0;
    restarted = 1;
    invariants()
  }
}
#endif

init {
  atomic {
    byte n;
    for (n : 0 .. NC - 1) { sa[n] = AGECAP; run client(n) }
    run clock();
    run net();
#ifdef FORCE
    run admin();
#endif
#ifdef RESTART
    run restart();
#endif
  }
}

/* No stranded waiter: no client waits forever (alive, neither acquiring nor giving up) while the
 * lock stays free, even when every message to it is lost. Checked with -a -f (weak fairness). */
#ifdef LIVENESS
#if NC > 2
ltl strand { !(<>[] (FREE && waiting[0]) || <>[] (FREE && waiting[1]) || <>[] (FREE && waiting[2])) }
#else
ltl strand { !(<>[] (FREE && waiting[0]) || <>[] (FREE && waiting[1])) }
#endif
#endif
