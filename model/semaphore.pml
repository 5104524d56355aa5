/* stamp (`npm run model -- --stamp` rewrites these lines; test/model-stamps.test.ts checks them):
 * follows src/scripts/semaphore/acquire.lua sha256:a8202f0abeda026ab0ca5392f90b2b993ccd66ecdc736ac098ad786520f6706e
 * follows src/scripts/semaphore/give-up.lua sha256:2e5b844d9513d78926965eceacddd0854a10781254a056abaf1dec10b40706d3
 * follows src/scripts/semaphore/add-permits.lua sha256:1760c7ff9b69342218ca3304f74d9245e47ac55bd4c19928375e7084fc4a10e3
 * follows src/scripts/semaphore/try-set-permits.lua sha256:6314b3b608b26cffc113f24b284714d8b0dbe38de80b7251899e252ff1c27f35
 * follows src/scripts/semaphore/drain.lua sha256:8398af5070f4e23af9a4b302b990c475f2cf49110eda7d17b17f4a6ef2bf5b19
 * follows src/scripts/lib/once.lua sha256:01231605d0a33ba90ea0997d9cb60027159281e9f7d3b7f09cf2c22140fd0e5c
 * follows src/primitives/semaphore.ts sha256:e05b3cc520b0cc3aebf6b0b5bf61eef5e724d6cad42090d0a50672676ced4f70
 * follows src/engine/acquire.ts sha256:c2a2d3ffa5687ee7297cb81107d0274299fd11df7663a4e5b01161427ae5d44c
 * follows src/redis/script-runner.ts sha256:263ed412d82eaadcb1cc267fe835f4f01638b952324f97a56d156cec0b1915f1
 */

/*
 * The Semaphore's Redis protocol (permits without owner, a queue whose live head reserves what it
 * asked for, a grant memory so that a repeated attempt or a late give-up finds its grant) with NC
 * clients and an admin, checked by spin. See docs/model.md for what is modelled, what is
 * abstracted away and how to read a trail.
 *
 * Each Lua script is one d_step (Redis runs a script atomically); the comment above it names the
 * script and the lines it follows. Each client is a process whose steps follow the acquisition
 * pipeline (src/engine/acquire.ts: WaitState.failed, the retry pause, giveUp) and
 * src/primitives/semaphore.ts (#take, #once, runUntilKnown). Time is a discrete clock: timers are
 * kept as what is left of them or as ages, so one `tick` moves them all.
 *
 * Unlike the lock's, this protocol leans on timing: a grant is remembered for M ticks, and a
 * give-up must reach Redis before that. The clock may therefore not pass a bound the code keeps:
 * a call's outcome comes within commandTimeout of its send (it runs in Redis, if at all, while
 * its sender still waits for it); a retry pause lasts at most P; a give-up or a release is sent
 * again until commandTimeout after its first send, and runs within that window. Bounds are taken
 * in their closed form (a deadline reached exactly may go either way), so integer ticks lose no
 * run of the real timings. Pub/sub only wakes waiters here (a message grants nothing), and a
 * parked waiter may look again at any moment, so a lost, late or repeated message is a run of
 * the model already.
 *
 * Switches (spin -D...):
 *   NC=n      clients (1 to 3); client 1 asks for 2 permits, the others for 1
 *   P=n       the longest retry pause after a failed call, in ticks (default 1 = half a
 *             commandTimeout: retryPause() is at most 1 s, so any commandTimeout of 2 s or more;
 *             P=2, a pause as long as commandTimeout, is a commandTimeout under about 1 s: the
 *             grant memory's added pause cap covers it, see docs/model.md)
 *   ADMIN     an admin sets the permits (try-set-permits) while the clients start, then adds
 *             ADD (add-permits), each call sent again within its window; without it, T permits
 *             are set before the clients start
 *   DRAIN     the admin also drains the semaphore (drain), sent again within its window
 *   CRASH     one client may die (stop for good) while it waits or holds
 *   LOSSES=n  at most n calls lose their request or reply (default: unbounded)
 *   LIVENESS  used with the ltl claim `strand`
 * Known-bad variants (each must be caught):
 *   BAD_GRANT_MEMORY  a grant is remembered for 2 commandTimeouts, as before the first fix
 *   BAD_PAUSELESS_MEMORY  a grant is remembered for 5 commandTimeouts without the retry pause's cap,
 *                     as before the second fix (caught with P=2)
 *   BAD_NO_ONCE       add-permits.lua without lib/once: a re-sent release adds its permits again
 *   BAD_NO_LAPSE      a waiter's place never lapses (acquire.lua 37): a dead head reserves forever
 */

#ifndef NC
#define NC 2
#endif
#define AD NC         /* the admin's index in the timer arrays */
#define C 2           /* commandTimeout, in ticks */
#ifndef P
#define P 1           /* the longest retry pause (retryPause: at most 1 s) */
#endif
#ifdef BAD_GRANT_MEMORY
#define GM 2
#else
#define GM 5          /* GRANT_MEMORY_TIMEOUTS (semaphore.ts) */
#endif
#if defined(BAD_GRANT_MEMORY) || defined(BAD_PAUSELESS_MEMORY)
#define GP 0
#else
#define GP P          /* MAX_RETRY_PAUSE_MS (script-runner.ts): at least the longest pause */
#endif
/* how long a grant is remembered (ARGV[6] of acquire, ARGV[4] of give-up) */
#define M (GM * C + GP)
#define OPM (2 * C)   /* a lib/once marker's TTL: 2 * commandTimeout (semaphore.ts #once) */
#define W 2           /* fairWaiterTimeout: a place lapses W ticks after it was written */
#define T 2           /* the permits trySetPermits sets */
#define ADD 1         /* the permits the admin adds afterwards */
#define NEED(x) ((x) == 1 -> 2 : 1)   /* permits each client asks for */
#define NONE 255
#define NOTTL 255     /* a key without expiry */
#define GRANTED 0     /* acquire.lua's nil */
#define RETRY 1       /* acquire.lua's "ms after which to retry" */
#ifdef LOSSES
#define CANLOSE (losses < LOSSES)
#define LOST losses++
#else
#define CANLOSE true
#define LOST skip
#endif

/* ---- Redis ---- */
byte av;           /* semaphore:permits, the available count (no TTL: the semaphore's data) */
bit pset;          /* ... the key exists */
byte q[NC];        /* semaphore:queue: waiter ids (one acquisition per client) in arrival order */
byte qn;
bit hw[NC];        /* the waiter is in the queue and in semaphore:wants */
byte pl[NC];       /* ... its "expires at" as time left (0: lapsed, still there until skipped) */
byte qttl;         /* TTL of semaphore:queue and semaphore:wants (set together, acquire.lua 63-64) */
bit gr[NC];        /* semaphore:grants holds the acquisition's grant */
byte ga[NC];       /* ... its age (stops at M: only "M or older" matters) */
byte gttl;         /* TTL of semaphore:grants */
bit mk[NC + 1];    /* the marker of each client's (or the admin's) lib/once call in flight: its TTL
                    * (OPM) outlasts every repeat, sent within commandTimeout (checked in RUK) */
byte mv[NC + 1];   /* ... the outcome it remembers */

/* ---- time: each client's (and the admin's) timer and the bound the clock may not pass ---- */
byte A[NC + 1];    /* age of the call in flight, of the retry pause, or of a runUntilKnown window */
byte U[NC + 1];    /* the bound for A (NONE: no bound) */
byte F[NC];        /* age of the first failure in a row (WaitState #firstFailure; NONE: none;
                    * stops at C + 1: past failFor) */

/* ---- ghosts, for the checks ---- */
byte tk[NC];       /* permits Redis took for the client's acquisition and did not get back */
byte added;        /* permits set or added (each call counted once) */
byte drained;      /* permits taken by drainPermits */
bit hold[NC];      /* acquire() resolved, release() not yet called */
bit waiting[NC];   /* in acquire(), alive: for the ltl claim */
bit ready[NC];     /* its permits are free, the head's reservation left: for the ltl claim */
bit dead[NC];
bit crashed;
byte losses;

#define NOTDUE(x) (U[x] == NONE || A[x] < U[x])
#if NC > 2
#define CANTICK (NOTDUE(0) && NOTDUE(1) && NOTDUE(2) && NOTDUE(AD))
#else
#define CANTICK (NOTDUE(0) && NOTDUE(1) && NOTDUE(AD))
#endif

/* A place that has not lapsed (acquire.lua 36-37: "expires > now"); the bad variant's never do. */
#ifdef BAD_NO_LAPSE
#define LIVE(x) (hw[x])
#else
#define LIVE(x) (hw[x] && pl[x] > 0)
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

/* A zset or hash that lost its last member is no key any more; a TTL of nothing is nothing. */
inline normalize() {
  if
  :: qn == 0 -> qttl = 0
  :: else
  fi;
  j = 0;
  for (i : 0 .. NC - 1) {
    if :: !hw[i] -> pl[i] = 0 :: else fi;
    if :: !gr[i] -> ga[i] = 0 :: else -> j = 1 fi
  }
  /* grants holding no grant hold only give-ups' marks, which no call reads (see docs): their
   * TTL matters to no grant */
  if :: !j -> gttl = 0 :: else fi;
  i = 0;
  j = 0
}

/* semaphore/acquire.lua, lines 24-73, for client c asking for n = NEED(c), as a waiter (ARGV[3]
 * is its id: semaphore.ts #take gives every waiting acquisition a place). rep: GRANTED or RETRY. */
inline s_acquire() {
  if
  :: gr[c] -> rep = GRANTED                                   /* 24-26: a repeat finds its grant */
  :: else ->
     /* 27-29: a give-up's mark; no attempt of an acquisition runs after its give-up (its calls
      * go in order on one connection, see docs), so none finds one */
     rsv = 0;
     do                                                       /* 33-45 */
     :: qn == 0 -> break                                      /* 35 */
     :: qn > 0 && LIVE(q[0]) ->                               /* 36-41: a live head */
        if
        :: q[0] != c -> rsv = NEED(q[0])                      /* 39: it reserves its permits */
        :: else
        fi;
        break
     :: qn > 0 && !LIVE(q[0]) -> hw[q[0]] = 0; lpop()         /* 42-44: a vanished head */
     od;
     if
     :: av >= NEED(c) + rsv ->                                /* 46 */
        assert(tk[c] == 0);                                   /* a repeat takes nothing more */
        av = av - NEED(c); pset = 1; tk[c] = NEED(c);         /* 47 */
        if
        :: hw[c] -> hw[c] = 0; lrem(c)                        /* 48-50 */
        :: else
        fi;
        /* 51-53: a wake-up, see pub/sub in docs */
        for (i : 0 .. NC - 1) {                               /* 55: forget grants M old */
          if :: gr[i] && ga[i] >= M -> gr[i] = 0 :: else fi
        }
        i = 0;
        gr[c] = 1; ga[c] = 0; gttl = M;                       /* 56-57 */
        rep = GRANTED
     :: else ->
        if
        :: !hw[c] -> q[qn] = c; qn++; hw[c] = 1               /* 61: NX keeps its arrival */
        :: else
        fi;
        pl[c] = W; qttl = W;                                  /* 62-64 */
        rep = RETRY                                           /* 66-73 */
     fi;
     rsv = 0
  fi
}

/* semaphore/give-up.lua, lines 18-37 (the wake-ups left out, see pub/sub in docs) */
inline s_giveup() {
  if
  :: hw[c] -> hw[c] = 0; lrem(c)                              /* 19-20 */
  :: else
  fi;
  if
  :: gr[c] ->                                                 /* 21 */
     assert(tk[c] == NEED(c));
     gr[c] = 0; av = av + NEED(c); pset = 1; tk[c] = 0;       /* 22 */
     rep = 1                                                  /* 26 */
  :: else ->
     gttl = M;                                                /* 28-30: marked given up */
     rep = 0                                                  /* 37 */
  fi
}

/* lib/once.lua remembered(), lines 5-11: a repeat answers the first run's outcome */
#ifdef BAD_NO_ONCE
#define REMEMBERED(x) false
#else
#define REMEMBERED(x) (mk[x])
#endif

/* semaphore/add-permits.lua, lines 13-22, marker x, adding n (a client's release(), the admin's
 * addPermits()) */
inline s_add(x, n) {
  if
  :: REMEMBERED(x) -> rep = mv[x]                             /* 13-16 */
  :: else ->
     av = av + n; pset = 1;                                   /* 17-18 */
     if                                   /* ghosts: added, or the client's permits back */
     :: x == AD -> added = added + n
     :: else -> tk[x] = 0
     fi;
     rep = av;
     mk[x] = 1; mv[x] = rep                                 /* 22: remember */
  fi
}

/* semaphore/try-set-permits.lua, lines 12-22, marker x */
inline s_tryset(x) {
  if
  :: REMEMBERED(x) -> rep = mv[x]
  :: else ->
     if
     :: pset -> rep = 0                                       /* 16-17 */
     :: else -> pset = 1; av = T; added = added + T; rep = 1  /* 16, 19-22 */
     fi;
     mk[x] = 1; mv[x] = rep
  fi
}

/* semaphore/drain.lua, lines 10-19, marker x */
inline s_drain(x) {
  if
  :: REMEMBERED(x) -> rep = mv[x]
  :: else ->
     if
     :: av == 0 -> rep = 0                                    /* 14-17 */
     :: else -> rep = av; drained = drained + av; av = 0      /* 18-19 */
     fi;
     mk[x] = 1; mv[x] = rep
  fi
}

/* The checks that hold in every state (run at the end of every atomic step). */
inline invariants() {
  j = 0;
  for (i : 0 .. NC - 1) {
    j = j + tk[i];
    /* a client believes it holds only while Redis counts its permits as taken */
    assert(!hold[i] || tk[i] == NEED(i));
    /* the queue and the wants hash hold the same waiters; no place outlives the keys */
    assert(!hw[i] || (qn > 0 && pl[i] <= qttl));
    /* no grant outlives its key */
    assert(!gr[i] || gttl > 0)
  }
  /* permits conserved: available + taken + drained = set + added, whatever was sent twice */
  assert(av + j + drained == added);
  /* nothing without expiry but semaphore:permits (docs/guarantees.md, section 4) */
  assert(qttl != NOTTL && gttl != NOTTL);
#ifdef LIVENESS
  /* ready[x]: x's permits are free, less what a live head other than x reserves (acquire.lua 46;
   * "live" as the real script has it, in the bad variant too) */
  j = 0;
  for (i : 0 .. NC - 1) {
    if
    :: j == 0 && i < qn && hw[q[i]] && pl[q[i]] > 0 -> j = q[i] + 1
    :: else
    fi
  }
  for (i : 0 .. NC - 1) {
    ready[i] = (av >= NEED(i) + ((j > 0 && j - 1 != i) -> NEED(j - 1) : 0))
  }
#endif
  i = 0;
  j = 0
}

/* One tick of the discrete clock: every TTL runs down, every age grows; never past a bound. */
proctype clock() {
  byte i, j;
end_clock:
  do
  :: d_step {
       CANTICK ->
       if
       :: qttl > 0 ->
          qttl--;
          if
          :: qttl == 0 ->
             for (i : 0 .. NC - 1) { q[i] = 0; hw[i] = 0; pl[i] = 0 }
             qn = 0
          :: else
          fi
       :: else
       fi;
       if
       :: gttl > 0 ->
          gttl--;
          if
          :: gttl == 0 -> for (i : 0 .. NC - 1) { gr[i] = 0; ga[i] = 0 }
          :: else
          fi
       :: else
       fi;
       for (i : 0 .. NC - 1) {
         if :: pl[i] > 0 -> pl[i]-- :: else fi;
         if :: gr[i] && ga[i] < M -> ga[i]++ :: else fi;
         if :: F[i] != NONE && F[i] <= C -> F[i]++ :: else fi
       }
       for (i : 0 .. NC) {
         if :: U[i] != NONE -> A[i]++ :: else fi
       }
       invariants()
     }
  od
}

/*
 * A call: sent (A[c] = 0, U[c] = its bound, by the step that sends it), then Redis runs it, then
 * its reply comes back or is lost; or the request is lost and it never runs. RPC(x, script) makes
 * the label x_rpc and jumps to x_replied or x_lost.
 */
#define RPC(x, script) \
x##_rpc: \
  if \
  :: d_step { script; normalize(); invariants() }; goto x##_replied \
  :: CANLOSE -> d_step { script; LOST; normalize(); invariants() }; goto x##_lost \
  :: CANLOSE -> d_step { LOST }; goto x##_lost \
  fi

/* runUntilKnown: the same call sent until commandTimeout after its first send; each send runs in
 * that window (the clock waits for it: the call reaches Redis at least once), its reply lost or
 * not. RUK(x, script) makes x_ruk and jumps to x_known (a reply) or x_unknown (given up). A
 * lib/once marker, set by a run in the window, is younger than A[c]: it outlasts every repeat. */
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

/* The wait ends without permits: giveUp() sends give-up.lua at once, until commandTimeout. */
#define GIVEUP A[c] = 0; U[c] = C; waiting[c] = 0; goto gu_ruk

/* The call's outcome has been dealt with: nothing of it is kept. */
#define FORGET A[c] = 0; U[c] = NONE; rep = 0; first = 0; nrun = 0

/*
 * One client: acquire(NEED(c)), then release(NEED(c)), again and again. Its steps follow the
 * pipeline (acquire.ts pipeline(), WaitState.failed) and semaphore.ts #take / release / #once.
 */
proctype client(byte c) {
  byte rep, first, nrun, rsv, i, j;

idle:
  /* a new acquisition, with a new id; nothing of the last one is left: no permit taken for it
   * (it was released or given back), no grant (forgotten once it was answered, or given back) */
  atomic {
    assert(tk[c] == 0 && !gr[c]);
    waiting[c] = 1;
    F[c] = NONE;
    A[c] = 0; U[c] = C;                      /* an attempt is sent */
    normalize()
  };

  RPC(acq, s_acquire());

acq_replied:
  atomic {
    if
    :: rep == GRANTED -> FORGET; U[c] = 0; goto granted   /* dealt with at once (U 0: no tick) */
    :: else -> FORGET; F[c] = NONE; goto park   /* an answer ends failures in a row (answered()) */
    fi
  };

acq_lost:
  /* the call fails: at its timeout (the clock waits for it) or sooner (a dropped connection) */
  atomic {
    FORGET;
    if
    :: F[c] == NONE -> F[c] = 0               /* #failed: the first failure in a row */
    :: else
    fi;
    if
    :: F[c] >= C -> GIVEUP                    /* failures for failFor: the wait fails */
    :: F[c] <= C -> A[c] = 0; U[c] = P; goto pause   /* ridden out, after retryPause() */
    :: GIVEUP                                 /* the deadline came, or an abort */
    fi
  };

pause:
  if
  :: atomic { A[c] = 0; U[c] = C; goto acq_rpc }   /* the pause is over: the attempt again */
  :: atomic { GIVEUP }                             /* an abort */
  fi;

park:
  /* Waiter.park(): until a wake-up, its timer (refresh period, head's lapse) or the deadline */
  if
  :: atomic { A[c] = 0; U[c] = C; goto acq_rpc }
  :: atomic { GIVEUP }
#ifdef CRASH
  :: atomic { !crashed -> crashed = 1; goto die }
#endif
  fi;

granted:
  if
  :: atomic {
       hold[c] = 1;
       waiting[c] = 0;
       U[c] = NONE;
       F[c] = NONE;
       /* the acquisition is over: no call of it reads its grant again */
       gr[c] = 0;
       normalize();
       invariants();
       goto holding
     }
  :: atomic { GIVEUP }                        /* aborted as the winning attempt came back */
  fi;

  /* ---- the wait ends without permits: giveUp() sends give-up.lua (GIVEUP) ---- */
  RUK(gu, s_giveup());
gu_known:
gu_unknown:
  atomic {
    /* whatever Redis took for this acquisition is back (no permit lost) */
    assert(tk[c] == 0);
    F[c] = NONE;
    FORGET;
    goto idle
  };

holding:
  if
  :: atomic { hold[c] = 0; A[c] = 0; U[c] = C; goto rel_ruk }   /* release(): add-permits.lua */
#ifdef CRASH
  :: atomic { !crashed -> crashed = 1; goto die }
#endif
  fi;

  RUK(rel, s_add(c, NEED(c)));
rel_known:
rel_unknown:
  atomic {
    /* a repeat answers what the first run did */
    assert(nrun < 2 || rep == first);
    mk[c] = 0;               /* no call reads this call's marker again (it expires by itself) */
    mv[c] = 0;
    FORGET;
    goto idle
  };

die:
  atomic {
    dead[c] = 1;
    hold[c] = 0;
    waiting[c] = 0;
    F[c] = NONE;
    FORGET
  };
end_dead:
  false
}

#ifdef ADMIN
/* The admin: trySetPermits(T), addPermits(ADD) (and drainPermits()), each sent until its outcome
 * is known, any number of times within its window (semaphore.ts #once). */
proctype admin() {
  byte rep, first, nrun, i, j;
  byte c = AD;

  atomic { A[c] = 0; U[c] = C };
  RUK(set, s_tryset(AD));
set_known:
set_unknown:
  atomic { assert(nrun < 2 || rep == first); mk[AD] = 0; mv[AD] = 0; FORGET };

  atomic { A[c] = 0; U[c] = C };
  RUK(add, s_add(AD, ADD));
add_known:
add_unknown:
  atomic { assert(nrun < 2 || rep == first); mk[AD] = 0; mv[AD] = 0; FORGET };

#ifdef DRAIN
  atomic { A[c] = 0; U[c] = C };
  RUK(drain, s_drain(AD));
drain_known:
drain_unknown:
  atomic { assert(nrun < 2 || rep == first); mk[AD] = 0; mv[AD] = 0; FORGET };
#endif
end_admin:
  skip
}
#endif

init {
  atomic {
    byte n;
    for (n : 0 .. NC) { U[n] = NONE; if :: n < NC -> F[n] = NONE :: else fi }
    for (n : 0 .. NC - 1) { run client(n) }
    run clock();
#ifdef ADMIN
    run admin()
#else
    pset = 1; av = T; added = T    /* trySetPermits(T) before the clients start */
#endif
  }
}

/* No stranded waiter: no client waits forever (alive, neither acquiring nor giving up) while its
 * permits stay free, even when every wake-up is lost. Checked with -a -f (weak fairness). */
#ifdef LIVENESS
#if NC > 2
ltl strand { !(<>[] (waiting[0] && ready[0]) || <>[] (waiting[1] && ready[1]) || <>[] (waiting[2] && ready[2])) }
#else
ltl strand { !(<>[] (waiting[0] && ready[0]) || <>[] (waiting[1] && ready[1])) }
#endif
#endif
