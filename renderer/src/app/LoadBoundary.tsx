import { Component, type ReactNode } from 'react';
import { ErrorNote, Loading } from '../components/Feedback.js';
import { LoadingFallback } from './retryable-lazy.js';

interface Props {
  /** What is being loaded, as the user knows it: "Analytics", "the console". */
  title: string;
  /** Makes the next render load again (a fresh loader). */
  retry: () => void;
  /** Called on each render, so that a retry renders the fresh component. */
  children: () => ReactNode;
}

interface State {
  failed: boolean;
}

/**
 * Keeps a chunk that fails to load (or a screen that throws while rendering) from unmounting
 * the whole console: says what could not be loaded, with a way to try again and, as a last
 * resort, to reload the console.
 */
export class LoadBoundary extends Component<Props, State> {
  state: State = { failed: false };

  static getDerivedStateFromError(): State {
    return { failed: true };
  }

  private readonly tryAgain = () => {
    this.props.retry();
    this.setState({ failed: false });
  };

  render() {
    const { title, children } = this.props;
    if (this.state.failed) {
      return (
        <div className="load-failed" data-testid="load-failed">
          <ErrorNote error={`Could not load ${title}.`} onRetry={this.tryAgain} testId="load-error" />
          <p className="muted">
            If trying again does not help, the console may have been updated:{' '}
            <button type="button" className="link" onClick={() => window.location.reload()}>
              Reload the console
            </button>
          </p>
        </div>
      );
    }
    return <LoadingFallback value={<Loading>Opening {title}…</Loading>}>{children()}</LoadingFallback>;
  }
}
