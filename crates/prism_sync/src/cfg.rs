//! The flat control-flow graph of one function, built from the IR's structured blocks.
//!
//! The IR is a tree: blocks of instructions, some of which own nested blocks. The analysis
//! needs two views of it. Paths ("is there a way from the end of A to the start of B that
//! passes no barrier?") want a flat graph of program points, and placement ("the nearest
//! enclosing point whose code perspective is broad enough") wants the tree. [`Cfg`] keeps
//! both: every block is a [`Frame`] with its parent, its code perspective and the path that
//! finds it again in the IR for insertion, and every instruction has an `enter` and an `exit`
//! point (the same point for instructions without nested blocks) wired into a graph.
//!
//! Edges: a block runs its instructions in order; an `if` enters either branch; a `loop`
//! runs its header, tests its condition (to the body or out), and goes from the latch back to
//! the header; `break`, `continue` and `return` jump. A `split` enters any one of its cases or
//! none (a thread runs at most one case, and masked threads run none). `group`, memory scopes
//! and `unsafe` bodies are entered and left in order. A verbatim CUDA block without a
//! simulated body is a single opaque step.
//!
//! Invariant: instruction ids are a pre-order numbering of the tree, so comparing ids
//! compares program (text) order, and the instructions of a frame are contiguous ranges.

use prism_ir::MemId;
use prism_ir::ir::{Block, Function, Inst, InstKind, ScopeKind};
use prism_types::perspective::Persp;
use std::collections::HashMap;

/// A program point.
pub(crate) type PointId = usize;
/// An instruction, numbered in pre-order.
pub(crate) type InstId = usize;
/// A block of the IR tree.
pub(crate) type FrameId = usize;

/// What a block is the body of.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum FrameKind {
    /// The function body.
    Root,
    /// A branch of an `if`; a non-uniform one may be taken by only some threads of a unit.
    Branch { uniform: bool },
    /// A loop's header, body or latch.
    Loop,
    /// The body of a `group`.
    Group,
    /// One case of a `split`: units `offset..offset + count` of the split's unit.
    Case { offset: u64, count: u64 },
    /// The body of a memory scope.
    Scope { kind: ScopeKind, mem: MemId, view: MemId },
    /// The body of `with unsafe:`.
    Unsafe,
    /// The simulated body of verbatim CUDA text.
    Verbatim,
}

/// A block of the IR tree.
#[derive(Clone, Debug)]
pub(crate) struct Frame {
    /// The enclosing block (none for the function body).
    pub parent: Option<FrameId>,
    /// The structured instruction this block belongs to.
    pub owner: Option<InstId>,
    /// What the block is.
    pub kind: FrameKind,
    /// The code perspective its instructions run at.
    pub code: Persp,
    /// Where the block is in the IR: for each level, the instruction index in the enclosing
    /// block and the index of the sub-block in `InstKind::blocks_mut` order.
    pub path: Vec<(usize, usize)>,
    /// Its instructions, in order.
    pub insts: Vec<InstId>,
    /// Nesting depth (0 for the function body).
    pub depth: usize,
    /// Whether this block or an enclosing one is unsafe code (or a verbatim block's
    /// simulated body): perspectives are unchecked there, so control may diverge anywhere.
    pub in_unsafe: bool,
}

/// One instruction and its points.
#[derive(Clone, Debug)]
pub(crate) struct InstInfo<'f> {
    /// The instruction.
    pub inst: &'f Inst,
    /// The block it is in.
    pub frame: FrameId,
    /// Its index in that block.
    pub index: usize,
    /// The point before it runs.
    pub enter: PointId,
    /// The point after it ran (`enter` for instructions without nested blocks).
    pub exit: PointId,
    /// Its nested blocks, in `InstKind::blocks` order.
    pub children: Vec<FrameId>,
    /// For a loop: the point where its condition is tested.
    pub cond: Option<PointId>,
}

/// The graph of one function.
#[derive(Debug)]
pub(crate) struct Cfg<'f> {
    /// Blocks; 0 is the function body.
    pub frames: Vec<Frame>,
    /// Instructions in pre-order.
    pub insts: Vec<InstInfo<'f>>,
    /// Successors of each point.
    pub succ: Vec<Vec<PointId>>,
    /// The instruction a point belongs to (none for the function's exit).
    pub point_inst: Vec<Option<InstId>>,
    /// The first point of the body.
    pub entry: PointId,
    /// Where the function returns.
    pub exit: PointId,
    /// The first point of each loop's header (what a back edge jumps to), by loop.
    pub loop_head: HashMap<PointId, InstId>,
}

impl<'f> Cfg<'f> {
    /// Builds the graph of `f`.
    pub fn build(f: &'f Function) -> Cfg<'f> {
        let mut cfg = Cfg {
            frames: Vec::new(),
            insts: Vec::new(),
            succ: Vec::new(),
            point_inst: Vec::new(),
            entry: 0,
            exit: 0,
            loop_head: HashMap::new(),
        };
        cfg.exit = cfg.point(None);
        cfg.frames.push(Frame {
            parent: None,
            owner: None,
            kind: FrameKind::Root,
            code: f.entry,
            path: Vec::new(),
            insts: Vec::new(),
            depth: 0,
            in_unsafe: false,
        });
        cfg.collect(&f.body, 0);
        cfg.entry = cfg.wire(0, cfg.exit, None);
        cfg
    }

    fn point(&mut self, inst: Option<InstId>) -> PointId {
        self.succ.push(Vec::new());
        self.point_inst.push(inst);
        self.succ.len() - 1
    }

    /// Pass 1: numbers instructions and blocks in pre-order and makes their points.
    fn collect(&mut self, b: &'f Block, frame: FrameId) {
        for (index, inst) in b.insts.iter().enumerate() {
            let id = self.insts.len();
            let enter = self.point(Some(id));
            let nested = inst.kind.blocks();
            let exit = if nested.is_empty() && !matches!(inst.kind, InstKind::Verbatim { .. }) {
                enter
            } else {
                self.point(Some(id))
            };
            let cond = matches!(inst.kind, InstKind::Loop { .. }).then(|| self.point(Some(id)));
            self.insts.push(InstInfo { inst, frame, index, enter, exit, children: Vec::new(), cond });
            self.frames[frame].insts.push(id);
            let parent = &self.frames[frame];
            let (code, depth, in_unsafe, path) = (parent.code, parent.depth + 1, parent.in_unsafe, parent.path.clone());
            for (sub, body) in nested.into_iter().enumerate() {
                let (kind, code) = match &inst.kind {
                    InstKind::If { uniform, .. } => (FrameKind::Branch { uniform: *uniform }, code),
                    InstKind::Loop { .. } => (FrameKind::Loop, code),
                    InstKind::Group { persp, .. } => (FrameKind::Group, *persp),
                    InstKind::Split { cases, .. } => {
                        let c = &cases[sub];
                        (FrameKind::Case { offset: c.offset, count: c.count }, c.persp)
                    }
                    InstKind::Scope { kind, mem, view, .. } => {
                        (FrameKind::Scope { kind: *kind, mem: *mem, view: *view }, code)
                    }
                    InstKind::Unsafe { .. } => (FrameKind::Unsafe, code),
                    _ => (FrameKind::Verbatim, code),
                };
                let child = self.frames.len();
                let mut child_path = path.clone();
                child_path.push((index, sub));
                self.frames.push(Frame {
                    parent: Some(frame),
                    owner: Some(id),
                    kind,
                    code,
                    path: child_path,
                    insts: Vec::new(),
                    depth,
                    in_unsafe: in_unsafe || matches!(kind, FrameKind::Unsafe | FrameKind::Verbatim),
                });
                self.insts[id].children.push(child);
                self.collect(body, child);
            }
        }
    }

    /// Pass 2: wires the points of a block whose control continues at `next`; returns the
    /// block's first point. `lp` is the innermost loop's exit and latch entry.
    fn wire(&mut self, frame: FrameId, next: PointId, lp: Option<(PointId, PointId)>) -> PointId {
        let ids = self.frames[frame].insts.clone();
        for (k, &id) in ids.iter().enumerate() {
            let follow = match ids.get(k + 1) {
                Some(&n) => self.insts[n].enter,
                None => next,
            };
            let info = self.insts[id].clone();
            let (enter, exit) = (info.enter, info.exit);
            match &info.inst.kind {
                InstKind::Break => {
                    // The verifier guarantees a loop around `break` and `continue`.
                    if let Some((out, _)) = lp {
                        self.succ[enter].push(out);
                    }
                    continue;
                }
                InstKind::Continue => {
                    if let Some((_, latch)) = lp {
                        self.succ[enter].push(latch);
                    }
                    continue;
                }
                InstKind::Return { .. } => {
                    let out = self.exit;
                    self.succ[enter].push(out);
                    continue;
                }
                InstKind::If { .. } | InstKind::Split { .. } => {
                    for &c in &info.children {
                        let first = self.wire(c, exit, lp);
                        self.succ[enter].push(first);
                    }
                    if matches!(info.inst.kind, InstKind::Split { .. }) {
                        // Threads outside every case skip the split.
                        self.succ[enter].push(exit);
                    }
                }
                InstKind::Loop { .. } => {
                    let cond = info.cond.expect("loops have a condition point");
                    let (header, body, latch) = (info.children[0], info.children[1], info.children[2]);
                    let head = self.wire(header, cond, lp);
                    self.loop_head.insert(head, id);
                    let latch_entry = self.wire(latch, head, lp);
                    let body_entry = self.wire(body, latch_entry, Some((exit, latch_entry)));
                    self.succ[enter].push(head);
                    self.succ[cond].push(body_entry);
                    self.succ[cond].push(exit);
                }
                InstKind::Group { .. }
                | InstKind::Scope { .. }
                | InstKind::Unsafe { .. }
                | InstKind::Verbatim { .. } => match info.children.first() {
                    Some(&c) => {
                        let first = self.wire(c, exit, lp);
                        self.succ[enter].push(first);
                    }
                    None => self.succ[enter].push(exit),
                },
                _ => {}
            }
            self.succ[exit].push(follow);
        }
        match ids.first() {
            Some(&id) => self.insts[id].enter,
            None => next,
        }
    }

    /// The frames from `frame` outwards to the function body, innermost first.
    pub fn ancestors(&self, frame: FrameId) -> impl Iterator<Item = FrameId> + '_ {
        std::iter::successors(Some(frame), move |&f| self.frames[f].parent)
    }

    /// Whether instruction `inst` lies inside the nested blocks of instruction `outer`.
    pub fn inside(&self, inst: InstId, outer: InstId) -> bool {
        self.ancestors(self.insts[inst].frame).any(|f| self.frames[f].owner == Some(outer))
    }

    /// The position in frame `f` of instruction `x`, or of the instruction of `f` whose
    /// nested blocks hold it; `None` when `x` lies outside `f`.
    pub fn index_in(&self, x: InstId, f: FrameId) -> Option<usize> {
        let mut inst = x;
        loop {
            let fr = self.insts[inst].frame;
            if fr == f {
                return Some(self.insts[inst].index);
            }
            inst = self.frames[fr].owner?;
        }
    }

    /// Whether frame `f` is `outer` or nested in it.
    pub fn frame_within(&self, f: FrameId, outer: FrameId) -> bool {
        self.ancestors(f).any(|a| a == outer)
    }

    /// The instructions nested in `inst` (all depths), in pre-order.
    pub fn descendants(&self, inst: InstId) -> std::ops::Range<InstId> {
        // Pre-order numbering: the descendants of an instruction directly follow it, up to its
        // next sibling (or the next sibling of an ancestor).
        let mut end = inst + 1;
        while end < self.insts.len() && self.inside(end, inst) {
            end += 1;
        }
        inst + 1..end
    }
}
