//! libCacheSim's random numbers (`next_rand`, `utils/include/mymath.h`, commit
//! aa0fc409), for the policies that draw them (FIFO-Merge, LeCaR) to draw the same: the
//! 64-bit LCG `x = 6364136223846793005 x + 1442695040888963407`. libCacheSim's simulator
//! starts it at 0 for each cache when it runs several caches, which its `cachesim` does
//! whenever given several sizes or policies; with one of each it seeds it from the clock.

/// The generator, from state 0.
#[derive(Debug, Clone, Default)]
pub struct Lcg(u64);

impl Lcg {
    pub fn draw(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6_364_136_223_846_793_005)
            .wrapping_add(1_442_695_040_888_963_407);
        self.0
    }
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
}
