//! libCacheSim's random numbers (`next_rand`, `utils/include/mymath.h`, commit
//! aa0fc409), for the policies that draw them (FIFO-Merge, LeCaR) to draw the same: the
//! 64-bit LCG `x = 6364136223846793005 x + 1442695040888963407`. libCacheSim's simulator
//! starts it at 0 for each cache when it runs several caches, which its `cachesim` does
//! whenever given several sizes or policies; with one of each it seeds it from the clock.

const MUL: u64 = 6_364_136_223_846_793_005;
const INC: u64 = 1_442_695_040_888_963_407;

/// The generator, from state 0.
#[derive(Debug, Clone, Default)]
pub struct Lcg(u64);

impl Lcg {
    pub fn draw(&mut self) -> u64 {
        self.0 = self.0.wrapping_mul(MUL).wrapping_add(INC);
        self.0
    }

    /// The next `N` draws, as `N` calls of [`Lcg::draw`] give them; each is computed from
    /// the state by its own jump (`a_i x + c_i`), so they do not wait on one another.
    #[inline]
    pub fn draws<const N: usize>(&mut self) -> [u64; N] {
        let jumps = const { jumps::<N>() };
        let state = self.0;
        let draws = jumps.map(|(a, c)| a.wrapping_mul(state).wrapping_add(c));
        if let Some(&last) = draws.last() {
            self.0 = last;
        }
        draws
    }

    /// The step that is `N` steps of the generator: `x -> a x + c`, as `(a, c)`; each of
    /// `N` draws in a row moved on by it gives the draw `N` on, so that `N` chains of
    /// draws can be followed side by side.
    pub const fn jump<const N: usize>() -> (u64, u64) {
        match jumps::<N>().last() {
            Some(&jump) => jump,
            None => (1, 0),
        }
    }

    /// Go on from `draw` (one this generator gave): the next draw is the one after it,
    /// as if the draws after `draw` had not been taken.
    #[inline]
    pub fn resume_after(&mut self, draw: u64) {
        self.0 = draw;
    }
}

/// For `i` in `0..N`, the step `x -> a x + c` that is `i + 1` steps of the generator.
const fn jumps<const N: usize>() -> [(u64, u64); N] {
    let mut out = [(0, 0); N];
    let (mut a, mut c) = (1u64, 0u64);
    let mut i = 0;
    while i < N {
        a = a.wrapping_mul(MUL);
        c = c.wrapping_mul(MUL).wrapping_add(INC);
        out[i] = (a, c);
        i += 1;
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_generator_is_libcachesims() {
        // From state 0 the first draw is the increment, the next one step of the LCG.
        let mut rand = Lcg::default();
        assert_eq!(rand.draw(), 1_442_695_040_888_963_407);
        assert_eq!(
            rand.draw(),
            1_442_695_040_888_963_407u64
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407)
        );
    }

    #[test]
    fn batches_of_draws_are_the_draws_one_by_one() {
        let mut one = Lcg::default();
        let mut batched = Lcg::default();
        let singles: Vec<u64> = (0..40).map(|_| one.draw()).collect();
        let mut got = batched.draws::<16>().to_vec();
        got.extend(batched.draws::<16>());
        got.extend(batched.draws::<8>());
        assert_eq!(got, singles);
        let (a, c) = Lcg::jump::<3>();
        assert_eq!(a.wrapping_mul(singles[5]).wrapping_add(c), singles[8]);
        // Giving back the draws after the 20th: the next one is the 21st.
        let mut back = Lcg::default();
        let first: [u64; 32] = back.draws();
        back.resume_after(first[19]);
        assert_eq!(back.draw(), singles[20]);
    }
}
