/* stamp (`npm run model -- --stamp` rewrites these lines; test/model-stamps.test.ts checks them):
 * follows src/scripts/permit-expirable-semaphore/acquire.lua sha256:d13d2ca66a328cf3c9954a8e090700c0fc13b3d09fe5b6d7628c2d5d037b8ddb
 * follows src/scripts/permit-expirable-semaphore/release.lua sha256:357afdf4fb74f788791b6d7ff9dced263aeaf73d4706ba91de4d34b3c09f5a26
 * follows src/scripts/permit-expirable-semaphore/update-lease.lua sha256:9d9f8651d93b6ee7f2275f23109deaa239822452c52545c590be513b0b9109c9
 * follows src/scripts/permit-expirable-semaphore/add-permits.lua sha256:ee25a1c5b585a5d631e398dba51e4873332c8ca05b85da35f78152548e054433
 * follows src/scripts/lib/expirable-leases.lua sha256:a7ed46412f837c71676fa7a64d1a9b3ad0127682f71b486234740b7ebe9f6f0c
 * follows src/scripts/lib/once.lua sha256:01231605d0a33ba90ea0997d9cb60027159281e9f7d3b7f09cf2c22140fd0e5c
 * follows src/primitives/permit-expirable-semaphore.ts sha256:67476f425a25edd7238883e35ac10917b3461a56171cbce441fff99f854998b9
 * follows src/engine/acquire.ts sha256:c2a2d3ffa5687ee7297cb81107d0274299fd11df7663a4e5b01161427ae5d44c
 * follows src/redis/script-runner.ts sha256:263ed412d82eaadcb1cc267fe835f4f01638b952324f97a56d156cec0b1915f1
 */

/*
 * The PermitExpirableSemaphore's Redis protocol (a total, a sorted set of the permits out by lease
 * end; a permit whose lease ran out returns to the pool by itself) with NC clients, checked by
 * spin. See docs/model.md for what is modelled, what is abstracted away and how to read a trail.
 *
 * Each Lua script is one d_step following the script line for line (the comment names the lines);
 * every script starts with lib/expirable-leases (`expire`). Each client is a process whose steps
 * follow the acquisition pipeline (src/engine/acquire.ts) and
 * src/primitives/permit-expirable-semaphore.ts: an acquisition's permit id is its own (a repeat
 * finds it, a give-up releases exactly it), releases and lease updates run until known
 * (runUntilKnown). Time is a discrete clock: timers are kept as what is left of them or as ages.
 * A holder counts its lease from the send of the attempt (or update) that set it: an attempt
 * refused with an answer set nothing, so from the first send since the last refusal. Pub/sub only
 * wakes waiters (a message grants nothing) and a parked waiter may look again at any moment, so a
 * lost, late or repeated message is a run of the model already.
 *
 * Switches (spin -D...):
 *   NC=n      clients (1 to 3); the total is NC - 1 permits
 *   ADMIN     an admin sets the total while the clients start (add-permits "set"), then adds one
 *             (add-permits "add"), each call sent again within its window
 *   CRASH     one client may die (stop for good) while it waits or holds
 *   LOSSES=n  at most n calls lose their request or reply (default: unbounded)
 *   LIVENESS  used with the ltl claim `strand`
 * Known-bad variants (each must be caught):
 *   BAD_NO_MARKER  release.lua sets no marker: a repeat answers "not held"
 *   BAD_NO_LAPSE   lib/expirable-leases.lua drops no lease that ran out: a lease never lapses
 *                  while the key lives on
 */

#ifndef NC
#define NC 2
#endif
#define AD NC         /* the admin's index in the timer and marker arrays */
#define C 2           /* commandTimeout, in ticks */
#define L 2           /* leaseTime */
#define OPM (2 * C)   /* a marker's TTL: 2 * commandTimeout (#release, #changeTotal) */
#define T (NC - 1)    /* the total set */
#define NONE 255
#define INF 255       /* a permit without lease ("inf"); a validity without end */
#define NOTTL 255     /* a key without expiry */
#define GRANTED 0     /* acquire.lua's nil */
#define RETRY 1
#ifdef LOSSES
#define CANLOSE (losses < LOSSES)
#define LOST losses++
#else
#define CANLOSE true
#define LOST skip
#endif

/* ---- Redis ---- */
byte tot;          /* expirable-semaphore:total (no TTL: the semaphore's data) */
bit tset;          /* ... the key exists */
bit le[NC];        /* expirable-semaphore:leases has the permit of the client's acquisition */
byte lr[NC];       /* ... its lease left (INF: none; 0: ran out, still there until dropped) */
byte lkttl;        /* TTL of the leases key (0: no key; NOTTL: persisted) */
bit mk[NC + 1];    /* the marker of each client's (or the admin's) call in flight: its TTL (OPM)
                    * outlasts every repeat, sent within commandTimeout (checked in RUK) */
byte mv[NC + 1];   /* ... what it remembers (lib/once) */

/* ---- time ---- */
byte A[NC + 1];    /* age of a runUntilKnown window (from its first send) */
byte U[NC + 1];    /* the bound for A (NONE: none) */
byte E[NC];        /* age of the first attempt sent since the last refusal (NONE: none); stops at L */

/* ---- ghosts ---- */
bit hold[NC];      /* acquire() resolved, release() not yet called */
byte v[NC];        /* the lease the holder can prove left (INF: no lease; 0: none) */
bit ls[NC];        /* the acquisition asks for a lease */
bit rl[NC];        /* a run of the client's release call removed its permit */
bit waiting[NC];
bit ready[NC];     /* a permit is free (leases that ran out count as free): for the ltl claim */
bit dead[NC];
bit crashed;
byte losses;

#define NOTDUE(x) (U[x] == NONE || A[x] < U[x])
#if NC > 2
#define CANTICK (NOTDUE(0) && NOTDUE(1) && NOTDUE(2) && NOTDUE(AD))
#else
#define CANTICK (NOTDUE(0) && NOTDUE(1) && NOTDUE(AD))
#endif

/* The key is gone: every permit in it with it. */
inline clearLeases() {
  for (i : 0 .. NC - 1) { le[i] = 0; lr[i] = 0 }
  lkttl = 0
}

/* lib/expirable-leases.lua, lines 5-10: permits whose lease ran out return to the pool (the
 * wake-up left out, see pub/sub in docs); the bad variant drops none */
inline expire() {
#ifndef BAD_NO_LAPSE
  for (i : 0 .. NC - 1) {
    if :: le[i] && lr[i] == 0 -> le[i] = 0 :: else fi
  }
#endif
  i = 0
}

/* lib/expirable-leases.lua keepLeasesUntilLastExpiry(), lines 11-19 */
inline keep() {
  j = 0;
  for (i : 0 .. NC - 1) {
    if
    :: le[i] && (lr[i] == INF || j == NOTTL) -> j = NOTTL
    :: le[i] && lr[i] != INF && j != NOTTL && lr[i] + 1 > j -> j = lr[i] + 1
    :: else
    fi
  }
  if
  :: j == 0                                                   /* 13: no permit out */
  :: j == NOTTL -> lkttl = NOTTL                              /* 14-15: persist */
  :: j == 1 -> clearLeases()                                  /* 17: pexpireat in the past */
  :: else -> lkttl = j - 1                                    /* 17: the last lease's end */
  fi;
  i = 0;
  j = 0
}

/* permit-expirable-semaphore/acquire.lua, lines 14-28, for client c's permit id */
inline s_acquire() {
  expire();                                                   /* 13 */
  if
  :: le[c] -> rep = GRANTED                                   /* 14-16: a repeat */
  :: else ->
     j = 0;
     for (i : 0 .. NC - 1) { if :: le[i] -> j++ :: else fi }
     if
     :: tot >= j + 1 ->                                       /* 17-18 */
        le[c] = 1;                                            /* 19-20 */
        if :: ls[c] -> lr[c] = L :: else -> lr[c] = INF fi;
        keep();                                               /* 21 */
        rep = GRANTED                                         /* 22 */
     :: else ->
        /* refused only when no permit is free: a lease that ran out counts as free */
        for (i : 0 .. NC - 1) { assert(!le[i] || lr[i] > 0) }
        rep = RETRY                                           /* 24-28 */
     fi
  fi;
  i = 0;
  j = 0
}

/* permit-expirable-semaphore/release.lua, lines 14-20: the permit of client o, marker x */
inline s_release(o, x) {
  expire();                                                   /* 13 */
  if
  :: le[o] ->                                                 /* 14: zrem */
     /* released only while out: a permit whose lease ran out is refused */
     assert(lr[o] > 0);
     le[o] = 0; lr[o] = 0;
#ifndef BAD_NO_MARKER
     mk[x] = 1;                                               /* 17 */
#endif
     keep();                                                  /* 18 */
     rl[o] = 1;
     rep = 1                                                  /* 19-20 */
  :: else -> rep = mk[x]                                      /* 15: exists(marker) */
  fi
}

/* permit-expirable-semaphore/update-lease.lua, lines 11-16 */
inline s_update() {
  expire();                                                   /* 10 */
  if
  :: !le[c] -> rep = 0                                        /* 11-13 */
  :: else -> lr[c] = L; keep(); rep = 1                       /* 14-16 */
  fi
}

/* lib/once.lua remembered(), lines 5-11 */
#define REMEMBERED(x) (mk[x])

/* permit-expirable-semaphore/add-permits.lua, lines 13-28, marker x: set n (st) or add n */
inline s_total(x, n, st) {
  if
  :: REMEMBERED(x) -> rep = mv[x]                             /* 13-16 */
  :: else ->
     if
     :: st && tset -> rep = 0                                 /* 18-21 */
     :: st && !tset -> tset = 1; tot = n; rep = 1
     :: !st -> tset = 1; tot = tot + n; rep = 1               /* 22-24 */
     fi;
     mk[x] = 1; mv[x] = rep                                   /* 28 */
  fi
}

/* A zset that lost its last member is no key any more. */
inline normalize() {
  j = 0;
  for (i : 0 .. NC - 1) {
    if :: le[i] -> j = 1 :: else -> lr[i] = 0 fi
  }
  if :: !j -> lkttl = 0 :: else fi;
  i = 0;
  j = 0
}

/* The checks that hold in every state (run at the end of every atomic step). */
inline invariants() {
  j = 0;
  for (i : 0 .. NC - 1) {
    /* a holder's proven lease is one Redis still counts: its permit is out, with at least as
     * long left */
    assert(!(hold[i] && v[i] > 0) || (le[i] && lr[i] >= v[i]));
    if :: hold[i] && v[i] > 0 -> j++ :: else fi;
    /* no permit outlives its key: the key lives until its last lease ends */
    assert(!le[i] || lkttl == NOTTL || (lr[i] != INF && lr[i] <= lkttl))
  }
  /* never more permits in use than the total */
  assert(j <= tot);
  /* the leases key is kept without expiry only while a permit without lease is out
   * (lib/expirable-leases.lua 14-15; docs/guarantees.md, section 4) */
  j = 0;
  for (i : 0 .. NC - 1) { if :: le[i] && lr[i] == INF -> j = 1 :: else fi }
  assert(lkttl != NOTTL || j);
#ifdef LIVENESS
  j = 0;
  for (i : 0 .. NC - 1) { if :: le[i] && lr[i] > 0 -> j++ :: else fi }
  for (i : 0 .. NC - 1) { ready[i] = (tot > j) }
#endif
  i = 0;
  j = 0
}

/* One tick of the discrete clock: every TTL and lease runs down, every age grows; never past a
 * bound. */
proctype clock() {
  byte i, j;
end_clock:
  do
  :: d_step {
       CANTICK ->
       for (i : 0 .. NC - 1) {
         if :: le[i] && lr[i] > 0 && lr[i] != INF -> lr[i]-- :: else fi;
         if :: E[i] != NONE && E[i] < L -> E[i]++ :: else fi;
         if :: v[i] > 0 && v[i] != INF -> v[i]-- :: else fi
       }
       for (i : 0 .. NC) {
         if :: U[i] != NONE -> A[i]++ :: else fi
       }
       if
       :: lkttl > 0 && lkttl != NOTTL ->
          lkttl--;
          if :: lkttl == 0 -> clearLeases() :: else fi
       :: else
       fi;
       invariants()
     }
  od
}

/* A call: Redis runs it and the reply comes back or is lost, or the request is lost. */
#define RPC(x, script) \
x##_rpc: \
  if \
  :: d_step { script; normalize(); invariants() }; goto x##_replied \
  :: CANLOSE -> d_step { script; LOST; normalize(); invariants() }; goto x##_lost \
  :: CANLOSE -> d_step { LOST }; goto x##_lost \
  fi

/* runUntilKnown: sent until commandTimeout after its first send, each send running in that
 * window (the call reaches Redis at least once); a marker set by a run in the window is younger
 * than A[c] and outlasts every repeat. */
#define RUK(x, script) \
x##_ruk: \
  if \
  :: d_step { assert(A[c] < OPM); script; RAN; normalize(); invariants() }; goto x##_known \
  :: CANLOSE -> d_step { assert(A[c] < OPM); script; RAN; LOST; normalize(); invariants() }; \
     if \
     :: A[c] <= C -> goto x##_ruk \
     :: goto x##_unknown \
     fi \
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

#define FORGET A[c] = 0; U[c] = NONE; rep = 0; first = 0; nrun = 0

/* The wait ends without a permit: giveUp() releases the acquisition's permit id. */
#define GIVEUP A[c] = 0; U[c] = C; waiting[c] = 0; E[c] = NONE; rl[c] = 0; goto gu_ruk

proctype client(byte c) {
  byte rep, first, nrun, i, j;

idle:
  /* a new acquisition, with a new permit id; with a lease or without */
  if
  :: atomic { ls[c] = 1; goto start }
  :: atomic { ls[c] = 0; goto start }
  fi;
start:
  atomic {
    assert(!le[c]);          /* nothing of the last acquisition is out */
    waiting[c] = 1;
    E[c] = 0
  };

  RPC(acq, s_acquire());

acq_replied:
  atomic {
    if
    :: rep == GRANTED ->
       FORGET;
       if
       :: ls[c] && E[c] < L -> v[c] = L - E[c]   /* the lease, from the send that may have set it */
       :: ls[c] && E[c] >= L -> v[c] = 0
       :: !ls[c] -> v[c] = INF
       fi;
       E[c] = NONE;
       goto granted
    :: else -> FORGET; E[c] = NONE; goto park   /* refused: that attempt set nothing */
    fi
  };

acq_lost:
  if
  :: atomic { goto acq_rpc }                /* failed: ridden out, the attempt again */
  :: atomic { GIVEUP }                      /* failed for failFor, the deadline, an abort */
  fi;

park:
  if
  :: atomic { E[c] = 0; goto acq_rpc }      /* a wake-up or the timer (next lease end) */
  :: atomic { GIVEUP }
#ifdef CRASH
  :: atomic { !crashed -> crashed = 1; goto die }
#endif
  fi;

granted:
  if
  :: atomic { hold[c] = 1; waiting[c] = 0; invariants(); goto holding }
  :: atomic { v[c] = 0; GIVEUP }            /* aborted as the winning attempt came back */
  fi;

  /* ---- giveUp(): release.lua for the acquisition's permit id ---- */
  RUK(gu, s_release(c, c));
gu_known:
gu_unknown:
  atomic {
    assert(!le[c]);          /* the permit is back */
    mk[c] = 0; mv[c] = 0; rl[c] = 0;
    FORGET;
    goto idle
  };

holding:
  if
  :: atomic { ls[c] -> A[c] = 0; U[c] = C; goto upd_ruk }   /* updateLeaseTime(id, L) */
  :: atomic {
       hold[c] = 0;          /* release(id): out of its critical section before the call goes */
       v[c] = 0;
       rl[c] = 0;
       A[c] = 0; U[c] = C;
       goto rel_ruk
     }
#ifdef CRASH
  :: atomic { !crashed -> crashed = 1; goto die }
#endif
  fi;

  RUK(upd, s_update());
upd_known:
  atomic {
    if
    :: rep == 1 && L - A[c] > v[c] -> v[c] = L - A[c]   /* a new lease from (after) the first send */
    :: rep == 1 && L - A[c] <= v[c] -> skip
    :: rep == 0 -> v[c] = 0                            /* not out: its lease ran out */
    fi;
    FORGET;
    goto holding
  };
upd_unknown:
  atomic { FORGET; goto holding };   /* unknown: the lease proven so far still holds */

  RUK(rel, s_release(c, c));
rel_known:
  atomic {
    /* release() never says "not held" about a release that happened (a repeat finds its marker) */
    assert(rep == 1 || !rl[c]);
    goto rel_done
  };
rel_unknown:
rel_done:
  atomic {
    assert(!le[c]);
    mk[c] = 0; mv[c] = 0; rl[c] = 0;   /* no call reads this call's marker again */
    FORGET;
    goto idle
  };

die:
  atomic {
    dead[c] = 1;
    hold[c] = 0;
    v[c] = 0;
    waiting[c] = 0;
    E[c] = NONE;
    FORGET
  };
end_dead:
  false
}

#ifdef ADMIN
/* The admin: trySetPermits(T), then addPermits(1), each until its outcome is known. */
proctype admin() {
  byte rep, first, nrun, i, j;
  byte c = AD;

  atomic { A[c] = 0; U[c] = C };
  RUK(set, s_total(AD, T, 1));
set_known:
set_unknown:
  atomic { assert(nrun < 2 || rep == first); mk[AD] = 0; mv[AD] = 0; FORGET };

  atomic { A[c] = 0; U[c] = C };
  RUK(add, s_total(AD, 1, 0));
add_known:
add_unknown:
  atomic { assert(nrun < 2 || rep == first); mk[AD] = 0; mv[AD] = 0; FORGET };
end_admin:
  skip
}
#endif

init {
  atomic {
    byte n;
    for (n : 0 .. NC) { U[n] = NONE; if :: n < NC -> E[n] = NONE :: else fi }
    for (n : 0 .. NC - 1) { run client(n) }
    run clock();
#ifdef ADMIN
    run admin()
#else
    tset = 1; tot = T         /* trySetPermits(T) before the clients start */
#endif
  }
}

/* No stranded waiter: no client waits forever while a permit stays free (a lease that ran out
 * counts as free), even when every wake-up is lost. Checked with -a -f (weak fairness). */
#ifdef LIVENESS
#if NC > 2
ltl strand { !(<>[] (waiting[0] && ready[0]) || <>[] (waiting[1] && ready[1]) || <>[] (waiting[2] && ready[2])) }
#else
ltl strand { !(<>[] (waiting[0] && ready[0]) || <>[] (waiting[1] && ready[1])) }
#endif
#endif
