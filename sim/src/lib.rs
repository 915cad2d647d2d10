pub mod fakes;
