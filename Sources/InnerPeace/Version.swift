/// The release of innerpeace: `innerpeace --version`, `innerpeace_build_info` and the API document.
public enum InnerPeaceVersion {
  public static let current = "0.1.0"
}
